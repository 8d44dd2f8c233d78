// Package console is the browser console that the public function serves at
// /console (docs/console.md): TypeScript in src/, bundled by esbuild into
// dist/ (make console-build), committed so that `go build` needs no npm, and
// embedded here. make console-check rebuilds it and fails on a stale dist/.
package console

import (
	"bytes"
	"compress/gzip"
	"embed"
	"path"
	"sync"
)

//go:embed dist/index.html dist/console.js dist/console.css
var dist embed.FS

// File is one file of the built console, plain and gzipped.
type File struct {
	Name        string
	ContentType string
	Plain       []byte
	gzipOnce    sync.Once
	gzipped     []byte
}

// Gzipped is the file gzip-compressed, made on first use: a cold start that
// serves no console pays nothing for it.
func (f *File) Gzipped() []byte {
	f.gzipOnce.Do(func() {
		var b bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
		_, _ = zw.Write(f.Plain)
		_ = zw.Close()
		f.gzipped = b.Bytes()
	})
	return f.gzipped
}

var contentTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
}

var files = func() map[string]*File {
	out := map[string]*File{}
	for _, name := range []string{"index.html", "console.js", "console.css"} {
		b, err := dist.ReadFile("dist/" + name)
		if err != nil {
			panic("console: " + err.Error())
		}
		out[name] = &File{Name: name, ContentType: contentTypes[path.Ext(name)], Plain: b}
	}
	return out
}()

// Page is the console's HTML page.
func Page() *File { return files["index.html"] }

// Asset is the page's script or style sheet by file name (console.js,
// console.css); ok is false for any other name.
func Asset(name string) (f *File, ok bool) {
	if name == "index.html" {
		return nil, false
	}
	f, ok = files[name]
	return f, ok
}
