package promql

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/plateau-perf/plateau/internal/monitor"
)

// Config is the configuration of a promql (or recipe) target, decoded from
// the plan's target fields by monitor.DecodeOptions.
type Config struct {
	// URL is the server's base URL (http://prometheus:9090; for Mimir or
	// Thanos the prefix before /api/v1).
	URL string `yaml:"url"`
	// Queries are the user's named PromQL expressions.
	Queries map[string]Query `yaml:"queries"`
	// Recipe / Recipes name built-in query sets (node, kubernetes, jvm,
	// postgres, mysql, kafka) added to Queries.
	Recipe  string   `yaml:"recipe"`
	Recipes []string `yaml:"recipes"`
	// Filter is a list of label matchers (namespace="folio",
	// pod=~"mod-.*") put into every selector of the recipes.
	Filter string `yaml:"filter"`
	// Window is the rate window of the recipes' rate() calls (default 1m).
	Window string `yaml:"window"`
	// BearerTokenEnv names the environment variable holding a bearer token.
	BearerTokenEnv string `yaml:"bearer_token_env"`
	// UsernameEnv and PasswordEnv name the environment variables of HTTP
	// basic authentication.
	UsernameEnv string `yaml:"username_env"`
	PasswordEnv string `yaml:"password_env"`
	// Headers are sent with every request (X-Scope-OrgID for Mimir). They
	// are not secret: use the *_env fields for credentials.
	Headers map[string]string `yaml:"headers"`
	// Top is how many series of each query the report draws (default 8);
	// the rest are in the table. Passed to the report in <stem>.hints.json.
	Top int `yaml:"top"`
	// Before and After widen the window queried after the run, so the
	// report can compare the system before, during and after the load
	// (defaults 2m each; After only counts once that time has passed).
	Before duration `yaml:"before"`
	After  duration `yaml:"after"`
	// Step is the query_range resolution (default: the target's interval,
	// coarsened to stay under Prometheus's 11 000 points per series).
	Step duration `yaml:"step"`
}

// Query is one named PromQL expression. In YAML it is either a mapping
// {query: ..., unit: ...} or just the expression.
type Query struct {
	Expr string `yaml:"query" json:"query"`
	Unit string `yaml:"unit" json:"unit,omitempty"`
	// Recipe names the recipe the query came from ("" for the user's own).
	Recipe string `yaml:"-" json:"recipe,omitempty"`
}

// UnmarshalYAML accepts a bare expression as well as the mapping form.
func (q *Query) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		q.Expr = n.Value
		return nil
	}
	type plain Query
	var p plain
	if err := n.Decode(&p); err != nil {
		return err
	}
	*q = Query(p)
	return nil
}

// duration is a time.Duration written as "2m" in YAML.
type duration time.Duration

func (d *duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := time.ParseDuration(n.Value)
	if err != nil {
		return fmt.Errorf("%q is not a duration such as 2m", n.Value)
	}
	if v < 0 {
		return fmt.Errorf("duration %q is negative", n.Value)
	}
	*d = duration(v)
	return nil
}

func (d duration) MarshalYAML() (any, error) { return time.Duration(d).String(), nil }

// DefaultTop is how many series of a query the report draws by default.
const DefaultTop = 8

// DefaultMargin is the default Before and After.
const DefaultMargin = 2 * time.Minute

var queryName = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)

// parse decodes and checks a target's configuration and expands its
// recipes. It touches nothing outside.
func parse(cfg monitor.TargetConfig) (*spec, error) {
	var c Config
	if err := monitor.DecodeOptions(cfg.Options, &c); err != nil {
		return nil, err
	}
	if c.URL == "" {
		return nil, errors.New("url is required (the Prometheus-compatible server, e.g. http://127.0.0.1:9090)")
	}
	u, err := url.Parse(c.URL)
	if err != nil {
		return nil, fmt.Errorf("url: %w", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("url %q: want http:// or https:// with a host", c.URL)
	}
	if u.User != nil {
		return nil, errors.New("url: credentials in the URL would be written into the run directory; use username_env and password_env")
	}
	if (c.UsernameEnv == "") != (c.PasswordEnv == "") {
		return nil, errors.New("username_env and password_env go together")
	}
	if c.BearerTokenEnv != "" && c.UsernameEnv != "" {
		return nil, errors.New("bearer_token_env and username_env exclude each other")
	}
	for k := range c.Headers {
		if strings.EqualFold(k, "Authorization") || strings.EqualFold(k, "Cookie") {
			return nil, fmt.Errorf("headers: %s is a credential; use bearer_token_env or username_env/password_env", k)
		}
	}
	if c.Top < 0 {
		return nil, errors.New("top must not be negative")
	}
	if c.Window != "" {
		if _, err := time.ParseDuration(c.Window); err != nil {
			return nil, fmt.Errorf("window %q is not a duration such as 1m", c.Window)
		}
	}
	s := &spec{Config: c, Queries: map[string]Query{}}
	recipes := c.Recipes
	if c.Recipe != "" {
		recipes = append([]string{c.Recipe}, recipes...)
	}
	if cfg.Kind == monitor.KindRecipe && len(recipes) == 0 {
		return nil, fmt.Errorf("recipe is required (one of %s)", strings.Join(RecipeNames(), ", "))
	}
	for _, r := range recipes {
		rec, err := LoadRecipe(r)
		if err != nil {
			return nil, err
		}
		for name, q := range rec.Queries {
			q.Expr = expand(q.Expr, c.Filter, c.Window)
			q.Recipe = r
			s.Queries[name] = q
		}
	}
	for name, q := range c.Queries {
		if !queryName.MatchString(name) {
			return nil, fmt.Errorf("query name %q: use letters, digits and _ (it names the series)", name)
		}
		if strings.TrimSpace(q.Expr) == "" {
			return nil, fmt.Errorf("query %s: empty expression", name)
		}
		s.Queries[name] = q
	}
	if len(s.Queries) == 0 {
		return nil, fmt.Errorf("no queries: set queries: or recipe: (one of %s)", strings.Join(RecipeNames(), ", "))
	}
	for name := range s.Queries {
		s.names = append(s.names, name)
	}
	sort.Strings(s.names)
	return s, nil
}

// spec is a parsed configuration: the Config with recipes expanded.
type spec struct {
	Config
	// Queries holds the user's queries and the recipes', by name.
	Queries map[string]Query
	names   []string
}

// expand fills a recipe expression's placeholders: __FILTER__ (label
// matchers, with the comma before it dropped when there is no filter) and
// __WINDOW__ (the rate window).
func expand(expr, filter, window string) string {
	filter = strings.TrimSpace(strings.Trim(strings.TrimSpace(filter), "{}"))
	if window == "" {
		window = "1m"
	}
	if filter == "" {
		expr = strings.ReplaceAll(expr, ",__FILTER__", "")
	}
	expr = strings.ReplaceAll(expr, "__FILTER__", filter)
	return strings.ReplaceAll(expr, "__WINDOW__", window)
}
