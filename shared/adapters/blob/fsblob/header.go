package fsblob

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"platformapi/shared/adapters/blob"
)

// An object file starts with a header: a 4-byte big-endian length, then that
// many bytes of JSON, then the body. Keeping the metadata inside the object's
// own file (not in a sidecar) means one rename publishes both at once.
//
// The JSON is padded to a fixed width so the header written before the body
// (with size and hash unknown) can be overwritten in place afterwards.
const headerWidth = 4096

type header struct {
	Key         string            `json:"key"`
	Size        int64             `json:"size"`
	SHA256      string            `json:"sha256"`
	ContentType string            `json:"contentType"`
	Metadata    map[string]string `json:"metadata,omitempty"`
	Modified    time.Time         `json:"modified"`
}

var errHeader = errors.New("corrupt object header")

func writeHeader(f *os.File, info blob.Info) error {
	js, err := json.Marshal(header{
		Key: info.Key, Size: info.Size, SHA256: fmt.Sprintf("%064s", info.SHA256),
		ContentType: info.ContentType, Metadata: info.Metadata, Modified: info.Modified,
	})
	if err != nil {
		return fmt.Errorf("fsblob: %w", err)
	}
	// The size placeholder is 0; the real size may need up to 19 more digits.
	width := len(js) + 20
	if width > headerWidth {
		return fmt.Errorf("fsblob: key, content type and metadata exceed the %d-byte header", headerWidth)
	}
	buf := make([]byte, 4+headerWidth)
	binary.BigEndian.PutUint32(buf, uint32(len(js)))
	copy(buf[4:], js)
	for i := 4 + len(js); i < len(buf); i++ {
		buf[i] = ' '
	}
	if _, err := f.Write(buf); err != nil {
		return fmt.Errorf("fsblob: %w", err)
	}
	return nil
}

func readHeader(f *os.File) (blob.Info, error) {
	buf := make([]byte, 4+headerWidth)
	if _, err := io.ReadFull(f, buf); err != nil {
		return blob.Info{}, fmt.Errorf("%w: %w", errHeader, err)
	}
	n := binary.BigEndian.Uint32(buf)
	if n > headerWidth {
		return blob.Info{}, errHeader
	}
	var h header
	if err := json.Unmarshal(buf[4:4+n], &h); err != nil {
		return blob.Info{}, fmt.Errorf("%w: %w", errHeader, err)
	}
	md := h.Metadata
	if md == nil {
		md = map[string]string{}
	}
	return blob.Info{Key: h.Key, Size: h.Size, SHA256: h.SHA256, ContentType: h.ContentType, Metadata: md, Modified: h.Modified}, nil
}
