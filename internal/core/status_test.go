package core

import "testing"

func TestStatusClass(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		status int
		class  ErrorClass
		fails  bool
	}{
		{0, ErrOther, true}, {42, ErrProtocol, true}, {100, ErrCheck, false}, {200, ErrCheck, false},
		{302, ErrCheck, false}, {399, ErrCheck, false}, {400, ErrHTTP4xx, true}, {404, ErrHTTP4xx, true},
		{499, ErrHTTP4xx, true}, {500, ErrHTTP5xx, true}, {503, ErrHTTP5xx, true}, {599, ErrHTTP5xx, true},
		{600, ErrProtocol, true}, {999, ErrProtocol, true},
	} {
		if got := StatusClass(tc.status); got != tc.class {
			t.Errorf("StatusClass(%d) = %v, want %v", tc.status, got, tc.class)
		}
		if got := StatusFails(tc.status); got != tc.fails {
			t.Errorf("StatusFails(%d) = %v, want %v", tc.status, got, tc.fails)
		}
	}
}
