package config

// Runtime is the [runtime] section: when modules' code is compiled and
// kept, and how many fresh instances run at once. Each key is also a
// `toolhost serve` flag of the same name (lazy, warm-up, interpret,
// max-resident, max-fresh); a flag given on the command line wins over the file. A nil
// field was not set.
type Runtime struct {
	// Lazy (lazy) lists modules from the describe cache and compiles them
	// in the background or on their first call; false compiles every
	// module before serving.
	Lazy *bool
	// WarmUp (warm_up) compiles the modules a lazy start listed in the
	// background after the start.
	WarmUp *bool
	// Interpret (interpret) runs a lazy start's first calls of a module
	// never compiled on the interpreter while it compiles.
	Interpret *bool
	// MaxResident (max_resident) is the most modules whose compiled code
	// stays in memory; idle ones past it are released and compiled again
	// from the cache on their next call. 0 is no limit.
	MaxResident *int
	// MaxFresh (max_fresh) is the most fresh instances made and run at
	// once; more calls queue under their deadline. 0 is no bound.
	MaxFresh *int
}

func (p *checker) runtimeSection(path []string, v any, c *Config) {
	t := p.table(path, v, "[runtime]")
	if t == nil {
		return
	}
	r := &c.Runtime
	p.fields(path, t,
		field{"lazy", func(path []string, v any) { p.flag(path, v, &r.Lazy) }},
		field{"warm_up", func(path []string, v any) { p.flag(path, v, &r.WarmUp) }},
		field{"interpret", func(path []string, v any) { p.flag(path, v, &r.Interpret) }},
		field{"max_resident", func(path []string, v any) { p.countOrNone(path, v, &r.MaxResident) }},
		field{"max_fresh", func(path []string, v any) { p.countOrNone(path, v, &r.MaxFresh) }},
	)
}

// countOrNone checks an integer in [0, MaxCount], for a bound whose 0
// means "none".
func (p *checker) countOrNone(path []string, v any, dst **int) {
	if n, ok := p.whole(path, v, 0, "must be 0 (no bound) or more, not %d"); ok {
		*dst = &n
	}
}
