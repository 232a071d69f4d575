// A stand-in for jslib.k6.io/k6-summary (the tests never fetch a remote
// module): handleSummary is not part of the traffic.
export function textSummary() { return ""; }
