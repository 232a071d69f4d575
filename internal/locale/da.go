package locale

// da is the Danish catalogue: each key is the English text (a fmt format)
// as the code writes it, each value its Danish text with the same verbs in
// the same order. The vocabulary follows reference 000, written in Danish
// by hand ("Svartid", "Kald per sekund", "Vurdering", "Konklusion",
// "Kravene", "kald per sekund"). Keys are grouped by the kind of text, as
// internal/report/words.go groups its sentences.
var da = map[string]string{
	// ---- words shared by every document -----------------------------
	"and": "og",
}
