//go:build !unix

package cli

// openFileLimit is 0 (unknown) where there is no RLIMIT_NOFILE: the plan
// checker then bounds users by memory alone.
func openFileLimit() int { return 0 }
