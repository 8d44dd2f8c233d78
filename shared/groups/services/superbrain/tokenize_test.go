package superbrain

import (
	"slices"
	"testing"
)

func TestNoStopWordIsLongerThanTheLookupBound(t *testing.T) {
	for w := range stopWords {
		if len(w) > maxStopWordLen {
			t.Errorf("stop word %q is longer than maxStopWordLen", w)
		}
	}
}

func TestTokenizerLowercasesSplitsOnNonWordsAndDropsStopWords(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       []string
	}{
		{"punctuation splits", "Hello, World!", []string{"hello", "world"}},
		{"stop words drop in any case", "The cat AND the hat", []string{"cat", "hat"}},
		{"digits stay in words", "route66 in 2026", []string{"route66", "2026"}},
		{"dots and hyphens split", "v2.0 e-mail", []string{"v2", "0", "e", "mail"}},
		{"apostrophes split", "don't", []string{"don", "t"}},
		{"underscores split", "snake_case", []string{"snake", "case"}},
		{"accented latin", "Naïve CAFÉ Straße", []string{"naïve", "café", "straße"}},
		{"a combining accent stays in its word", "cafe\u0301 ole", []string{"cafe\u0301", "ole"}},
		{"cyrillic", "Привет, МИР", []string{"привет", "мир"}},
		{"greek", "Καλημέρα κόσμε", []string{"καλημέρα", "κόσμε"}},
		{"devanagari vowel signs stay in words", "नमस्ते दुनिया", []string{"नमस्ते", "दुनिया"}},
		{"arabic-indic digits", "عام ٢٠٢٦", []string{"عام", "٢٠٢٦"}},
		{"unspaced scripts are one token per run", "東京タワー、大阪", []string{"東京タワー", "大阪"}},
		{"emoji and symbols split", "fire🔥water ⚡ $5", []string{"fire", "water", "5"}},
		{"only stop words and spaces", "  to be or not to be  ", nil},
		{"empty", "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			tokenize(tc.text, func(tok string) { got = append(got, tok) })
			if !slices.Equal(got, tc.want) {
				t.Fatalf("tokenize(%q) = %q, want %q", tc.text, got, tc.want)
			}
		})
	}
}
