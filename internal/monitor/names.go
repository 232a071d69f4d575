package monitor

// Metric names shared by live monitors and importers, so that the report
// finds a host's CPU or a JVM's heap under one name whichever wrote it
// (the vmstat import once wrote "cpu_user" where the report reads
// "cpu_user_pct"). Units are in the name where they matter: _pct is a
// percentage [0,100], _bytes bytes, _per_s a rate. An importer converts its
// source's units (vmstat's and jstat's KiB) into these.
const (
	// Host (KindHost): the host monitor; vmstat.
	MetricCPUUserPct      = "cpu_user_pct"
	MetricCPUSystemPct    = "cpu_system_pct"
	MetricCPUIdlePct      = "cpu_idle_pct"
	MetricCPUIOWaitPct    = "cpu_iowait_pct"
	MetricCPUStealPct     = "cpu_steal_pct"
	MetricCPUGuestPct     = "cpu_guest_pct"
	MetricCPUBusyPct      = "cpu_busy_pct" // 100 − idle − iowait
	MetricMemFreeBytes    = "mem_free_bytes"
	MetricMemBuffersBytes = "mem_buffers_bytes"
	MetricMemCachedBytes  = "mem_cached_bytes"
	MetricSwapUsedBytes   = "swap_used_bytes"
	MetricProcsRunning    = "procs_running"
	MetricProcsBlocked    = "procs_blocked"
	MetricCtxSwitchesPerS = "ctx_switches_per_s"
	MetricInterruptsPerS  = "interrupts_per_s"
	MetricDiskReadPerS    = "disk_read_bytes_per_s"
	MetricDiskWritePerS   = "disk_write_bytes_per_s"

	// JVM (KindJVM): the jvm monitor; jstat. jstat's own columns (EU, OU,
	// YGC, FGC, GCT …) keep jstat's names and KB unit.
	MetricHeapUsedBytes      = "heap_used_bytes"      // S0U+S1U+EU+OU
	MetricHeapCommittedBytes = "heap_committed_bytes" // S0C+S1C+EC+OC
	MetricGCTimePct          = "gc_time_pct"          // share of wall time in GC
)
