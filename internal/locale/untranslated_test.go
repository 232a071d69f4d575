package locale

// untranslatedDA are the keys left in English in a Danish document, named
// one by one: TestDanishCatalogue fails on a key a document uses that is
// neither translated nor listed here, and on a listed key that has a
// translation or is no longer used. Every key is translated today; a new
// sentence whose Danish is not yet written goes here, by its key, until
// it is.
var untranslatedDA = map[string]bool{"a knee needs at least 2 distinct loads, have %d": true,
	"not enough data to judge: %s had %d requests over %s s; a verdict on scaling needs every load step to last %s s or more and hold %d or more": true,
	"throughput stopped growing beyond %s but average response time did not rise":                                                                 true,
	": these times are the servers' own, so the limit is in front of them (a queue in a balancer or proxy) or in the load generator":              true,
	": the load generator, not the system, was probably the limit (the Little's-law check shows the asked load was not delivered)":                true,
	", and the Little's-law check shows the load was delivered: taken as noise, not a knee":                                                       true,
	"the USL cannot be fitted to these %d loads":                                                                                                  true,
	"the USL does not describe these data (%s; R² below %s)":                                                                                      true,
	"no saturation: throughput grew in proportion to load (%s)":                                                                                   true,
	"no coherency penalty found: peak beyond tested range (%s; throughput would approach ~%s req/s)":                                              true,
	"no probe measured the system": true,
	"a USL fit over the probes needs at least %d distinct loads that measured the system, have %d":                               true,
	"the USL does not describe these probes well enough (R² = %s over %d loads, adjusted for its 3 parameters %s, below %s)":     true,
	"the fit's peak (%s req/s) is above every throughput measured around it (at most %s req/s): the probes contradict it":        true,
	"throughput reached only %.0f%% of the asked rate: the system saturated or the generator dropped starts":                     true,
	"Little's law gives %s busy users for %s: think time or response time overstated, or requests issued in parallel":            true,
	"limited by %s, counted full (%s %s of its capacity at %s): the configured limit %s (%s)":                                    true,
	"uncertain: the generator was starved of CPU at %s %s, so the knee may be where the generator, not the service, fell behind": true,
	"uncertain: the generator was starved of CPU at %s %s, so it may not have pushed the service to its knee":                    true,
}
