package importer

import (
	"strings"
	"sync"
)

// Labels interns label names so decoded records carry a small id instead of
// a string. Safe for concurrent use; decoding goroutines put a Cache in
// front of it so the lock is taken once per distinct label per goroutine.
type Labels struct {
	mu    sync.RWMutex
	ids   map[string]int32
	names []string
}

// NewLabels returns an empty table.
func NewLabels() *Labels { return &Labels{ids: map[string]int32{}} }

// ID returns the id of name, adding it when new.
func (l *Labels) ID(name []byte) int32 {
	l.mu.RLock()
	id, ok := l.ids[string(name)]
	l.mu.RUnlock()
	if ok {
		return id
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if id, ok := l.ids[string(name)]; ok {
		return id
	}
	s := string(name)
	id = int32(len(l.names))
	l.names = append(l.names, s)
	l.ids[s] = id
	return id
}

// Name returns the label of id.
func (l *Labels) Name(id int32) string {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if id < 0 || int(id) >= len(l.names) {
		return ""
	}
	return l.names[id]
}

// Len is the number of distinct labels.
func (l *Labels) Len() int {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return len(l.names)
}

// Cache is one goroutine's lock-free view of a Labels table. Not safe for
// concurrent use.
type Cache struct {
	l *Labels
	m map[string]int32
}

// NewCache returns a cache over l.
func (l *Labels) NewCache() *Cache { return &Cache{l: l, m: map[string]int32{}} }

// ID returns the id of name; the lookup does not allocate once name is cached.
func (c *Cache) ID(name []byte) int32 {
	if id, ok := c.m[string(name)]; ok {
		return id
	}
	id := c.l.ID(name)
	c.m[string(name)] = id
	return id
}

// MethodLabel is the label of a request named name that was sent with
// method: "METHOD name", unless name already begins with the method as a
// word ("GET /var" stays "GET /var", never "GET GET /var"). Labels stay as
// the source tool's user wrote them; the method is only added where it is
// missing. An empty method or name leaves the other alone.
func MethodLabel(method, name string) string {
	method, name = strings.TrimSpace(method), strings.TrimSpace(name)
	if method == "" || HasMethod(name, method) {
		return name
	}
	if name == "" {
		return method
	}
	return method + " " + name
}

// HasMethod reports whether name already begins with method followed by a
// space (case-insensitively: "get /x" holds GET).
func HasMethod(name, method string) bool {
	return len(name) > len(method) && name[len(method)] == ' ' && strings.EqualFold(name[:len(method)], method)
}
