package wiretest

import "testing"

// TestHARFiddlerExport replays a real Fiddler export (SeldomQA/seldom's
// test.har: a GET with a repeated query parameter and a client's own
// User-Agent and Accept) and compares plateau's request with the HAR's
// entry: method, host, path, the raw query in its order, headers, body.
func TestHARFiddlerExport(t *testing.T) {
	o := RunHAR(t, "testdata/har/seldom-fiddler.har", Options{})
	if len(o.HAR) != 1 || len(o.Plateau) != 1 {
		t.Fatalf("HAR %d entries, plateau %d requests; want 1 and 1", len(o.HAR), len(o.Plateau))
	}
	if q := o.Plateau[0].Query; q != "name=tom&hobby=basketball&hobby=swim" {
		t.Errorf("query %q, want the recorded name=tom&hobby=basketball&hobby=swim", q)
	}
}

// TestHARServerSideCapture replays train-ticket's sample.har (80 entries
// an Akita agent recorded on the server: paths without scheme or host, a
// Host header, base64 response bodies, folder names created by POSTs and
// read back by GETs) through a recorder answering as the site did.
func TestHARServerSideCapture(t *testing.T) {
	o := RunHAR(t, "testdata/har/train-ticket-akita.har", Options{})
	if len(o.HAR) != 80 || len(o.Plateau) != 80 {
		t.Fatalf("HAR %d entries, plateau %d requests; want 80 and 80", len(o.HAR), len(o.Plateau))
	}
}
