package core

import (
	"strconv"
	"strings"
)

// NetSuffix ends the label of a request's response time net of its
// downstream calls (an access log joined with an external-call log):
// "GET /a (net of downstream)" is the net twin of "GET /a".
const NetSuffix = " (net of downstream)"

// LabelStatus reads the HTTP status off an access-log label written by
// status ("GET /a 200") or off its net twin ("GET /a 200 (net of
// downstream)"): the status, whether the label is the net twin, and false
// when the label ends in no status.
func LabelStatus(label string) (status int, net bool, ok bool) {
	if l, cut := strings.CutSuffix(label, NetSuffix); cut {
		label, net = l, true
	}
	i := strings.LastIndexByte(label, ' ')
	if i < 0 || i == len(label)-1 {
		return 0, net, false
	}
	n, err := strconv.Atoi(label[i+1:])
	if err != nil || n < 0 || n > 999 {
		return 0, net, false
	}
	return n, net, true
}
