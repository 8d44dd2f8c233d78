package superbrain

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// stopWords are dropped from texts and queries: words so common that they
// only add noise to a lexical score. The list is Lucene's English stop set,
// kept small on purpose: memories are short, and every word dropped is a
// word nobody can search for.
var stopWords = func() map[string]struct{} {
	m := map[string]struct{}{}
	for _, w := range strings.Fields(`a an and are as at be but by for if in into is it
		no not of on or such that the their then there these they this to was will with`) {
		m[w] = struct{}{}
	}
	return m
}()

// maxStopWordLen spares longer tokens the stop-word lookup.
const maxStopWordLen = 5

// inWord reports whether r belongs to a token: letters and decimal digits
// of any script, and the combining marks that complete them (accents in
// decomposed form, vowel signs of Indic scripts), which must not split a
// word.
func inWord(r rune) bool {
	if r < utf8.RuneSelf { // the common case, without the Unicode tables
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r)
}

// tokenize calls emit for each token of text: maximal runs of word runes,
// lower-cased, stop words dropped. A callback instead of a slice lets
// search scan thousands of texts without allocating per token.
//
// Known limits, accepted for a lexical memory: no stemming ("cats" does
// not find "cat"), no Unicode normalisation (a precomposed "é" and "e" +
// combining accent differ), and scripts written without spaces (Chinese,
// Japanese, Thai) yield one token per run of text, not per word.
func tokenize(text string, emit func(string)) {
	start := -1
	for i, r := range text {
		switch word := inWord(r); {
		case word && start < 0:
			start = i
		case !word && start >= 0:
			emitToken(text[start:i], emit)
			start = -1
		}
	}
	if start >= 0 {
		emitToken(text[start:], emit)
	}
}

func emitToken(tok string, emit func(string)) {
	tok = strings.ToLower(tok)
	if len(tok) <= maxStopWordLen {
		if _, stop := stopWords[tok]; stop {
			return
		}
	}
	emit(tok)
}
