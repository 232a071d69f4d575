//go:build !unix

package importer

import "time"

func procCPU() time.Duration { return 0 }
