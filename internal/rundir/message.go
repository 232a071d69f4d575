package rundir

import (
	"fmt"
	"reflect"
	"regexp"
	"strings"
)

// A Message is a sentence of run.json (a note, a source's description)
// as a message of the report's catalogue: its key is the English fmt
// format with every argument verb made %s, its arguments are formatted
// already (a path, a count, an error), so a report in another language
// words the sentence from its translated key and the same arguments.
type Message struct {
	Key  string       `json:"key"`
	Args []MessageArg `json:"args,omitempty"`
}

// MessageArg is one formatted argument of a Message.
type MessageArg struct {
	Text string `json:"text"`
	// Num marks a number: a report writes its separators as its language
	// does (0.019 → 0,019 in Danish).
	Num bool `json:"num,omitempty"`
}

// verbs are fmt's verbs, with their flags, width and precision.
var verbs = regexp.MustCompile(`%[-+#0 ]*[0-9]*(?:\.[0-9]+)?[a-zA-Z%]`)

// NewMessage formats format with args as fmt.Sprintf does and returns the
// English text with its message. A format whose verbs do not match its
// arguments gives fmt's text and a message without arguments of that
// text (worded in English everywhere, as before).
func NewMessage(format string, args ...any) (string, Message) {
	text := fmt.Sprintf(format, args...)
	var b strings.Builder
	var margs []MessageArg
	i, last := 0, 0
	ok := true
	for _, loc := range verbs.FindAllStringIndex(format, -1) {
		b.WriteString(format[last:loc[0]])
		last = loc[1]
		v := format[loc[0]:loc[1]]
		if v == "%%" {
			b.WriteString("%%")
			continue
		}
		if i >= len(args) {
			ok = false
			break
		}
		b.WriteString("%s")
		margs = append(margs, MessageArg{Text: fmt.Sprintf(v, args[i]), Num: numeric(args[i]) && !strings.ContainsAny(v, "qsx")})
		i++
	}
	b.WriteString(format[last:])
	if !ok || i != len(args) {
		return text, Message{Key: strings.ReplaceAll(text, "%", "%%")}
	}
	return text, Message{Key: b.String(), Args: margs}
}

// numeric reports whether v is a plain number (not a duration, which
// formats with its unit).
func numeric(v any) bool {
	if v == nil {
		return false
	}
	if _, ok := v.(fmt.Stringer); ok {
		return false
	}
	switch reflect.TypeOf(v).Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return true
	}
	return false
}

// AddMessage records text's message (NewMessage) in Messages.
func (in *Info) AddMessage(text string, m Message) {
	if in.Messages == nil {
		in.Messages = map[string]Message{}
	}
	in.Messages[text] = m
}

// Worded returns text in a language: its message worded by tr (a
// catalogue's T) when run.json holds one, else text as recorded.
func (in *Info) Worded(text string, tr func(key string, args ...any) string) string {
	return in.WordedNum(text, tr, nil)
}

// WordedNum is Worded with the arguments marked as numbers written by num
// (the language's separators and grouping: 3304 → 3.304 in Danish); nil
// num leaves them as recorded.
func (in *Info) WordedNum(text string, tr func(key string, args ...any) string, num func(string) string) string {
	m, ok := in.Messages[text]
	if !ok || tr == nil {
		return text
	}
	args := make([]any, len(m.Args))
	for i, a := range m.Args {
		args[i] = a.Text
		if a.Num && num != nil {
			args[i] = num(a.Text)
		}
	}
	return tr(m.Key, args...)
}
