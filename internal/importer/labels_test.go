package importer

import "testing"

func TestMethodLabel(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ method, name, want string }{
		{"GET", "/var", "GET /var"},
		{"GET", "GET /var", "GET /var"},        // Locust name that holds the method
		{"POST", "POST /login", "POST /login"}, // k6 name tag that holds it
		{"post", "POST /login", "POST /login"}, // case of the method does not matter
		{"GET", "GETTER /x", "GET GETTER /x"},  // a word that starts like the method is not it
		{"GET", "View a model", "GET View a model"},
		{"", "custom", "custom"},
		{"GET", "", "GET"},
	} {
		if got := MethodLabel(c.method, c.name); got != c.want {
			t.Errorf("MethodLabel(%q, %q) = %q, want %q", c.method, c.name, got, c.want)
		}
	}
}
