// Package archive builds, signs and checks the portable archive of a
// managed database: a zip holding exactly database.sqlite and
// manifest.json. Archives come back from clients on import, so reading one
// trusts nothing in it: entry names, declared sizes and the payload are all
// checked, and decompression stops at the cap whatever the headers claim.
package archive

import (
	"archive/zip"
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"
)

// Entry names.
const (
	DatabaseEntry = "database.sqlite"
	ManifestEntry = "manifest.json"
)

// maxManifest bounds manifest.json.
const maxManifest = 64 << 10

// sqliteHeader opens every SQLite database file.
var sqliteHeader = []byte("SQLite format 3\x00")

// Manifest describes an archive.
type Manifest struct {
	TransferID      string    `json:"transferId"`
	AccountID       string    `json:"accountId"`
	ProjectID       string    `json:"projectId"`
	DatabaseVersion int64     `json:"databaseVersion"`
	SQLiteVersion   string    `json:"sqliteVersion"`
	CreatedAt       time.Time `json:"createdAt"`
}

// ErrInvalid wraps every reason an archive is refused. Its text is the
// API's error code, so a failed transfer's error starts with it.
var ErrInvalid = errors.New("archive_invalid")

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

// Write zips the database file at dbPath with its manifest into w.
func Write(w io.Writer, dbPath string, m Manifest) error {
	zw := zip.NewWriter(w)
	mf, err := zw.CreateHeader(&zip.FileHeader{Name: ManifestEntry, Method: zip.Deflate, Modified: m.CreatedAt})
	if err != nil {
		return err
	}
	if err := json.NewEncoder(mf).Encode(m); err != nil {
		return err
	}
	df, err := zw.CreateHeader(&zip.FileHeader{Name: DatabaseEntry, Method: zip.Deflate, Modified: m.CreatedAt})
	if err != nil {
		return err
	}
	f, err := os.Open(dbPath)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := io.Copy(df, f); err != nil {
		return err
	}
	return zw.Close()
}

// Extract checks the zip at path and writes its database to dbPath. It
// refuses (ErrInvalid) anything but exactly the two entries, names with
// paths, a database larger than maxDB bytes uncompressed (by header or by
// actual inflation: a zip bomb stops at the cap), and a database entry that
// does not start with the SQLite header.
func Extract(path, dbPath string, maxDB int64) (Manifest, error) {
	var m Manifest
	zr, err := zip.OpenReader(path)
	if err != nil {
		return m, invalid("not a zip file: %v", err)
	}
	defer zr.Close()
	if len(zr.File) != 2 {
		return m, invalid("the archive must hold exactly %s and %s", DatabaseEntry, ManifestEntry)
	}
	var db, man *zip.File
	for _, f := range zr.File {
		switch f.Name {
		case DatabaseEntry:
			db = f
		case ManifestEntry:
			man = f
		default:
			return m, invalid("unexpected entry %q", f.Name)
		}
	}
	if db == nil || man == nil {
		return m, invalid("the archive must hold exactly %s and %s", DatabaseEntry, ManifestEntry)
	}
	if man.UncompressedSize64 > maxManifest {
		return m, invalid("manifest too large")
	}
	raw, err := readAtMost(man, maxManifest)
	if err != nil {
		return m, err
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return m, invalid("manifest is not valid JSON: %v", err)
	}
	if db.UncompressedSize64 > uint64(maxDB) {
		return m, invalid("database larger than the %d byte cap", maxDB)
	}
	rc, err := db.Open()
	if err != nil {
		return m, invalid("database entry unreadable: %v", err)
	}
	defer rc.Close()
	out, err := os.OpenFile(dbPath, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return m, err
	}
	n, err := io.Copy(out, io.LimitReader(rc, maxDB+1))
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return m, invalid("database entry unreadable: %v", err)
	}
	if n > maxDB {
		return m, invalid("database inflates beyond the %d byte cap", maxDB)
	}
	head := make([]byte, len(sqliteHeader))
	f, err := os.Open(dbPath)
	if err != nil {
		return m, err
	}
	_, err = io.ReadFull(f, head)
	f.Close()
	if err != nil || !bytes.Equal(head, sqliteHeader) {
		return m, invalid("%s is not a SQLite database", DatabaseEntry)
	}
	return m, nil
}

func readAtMost(f *zip.File, limit int64) ([]byte, error) {
	rc, err := f.Open()
	if err != nil {
		return nil, invalid("%s unreadable: %v", f.Name, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, limit+1))
	if err != nil {
		return nil, invalid("%s unreadable: %v", f.Name, err)
	}
	if int64(len(b)) > limit {
		return nil, invalid("%s too large", f.Name)
	}
	return b, nil
}

// Signer signs archives with the platform's Ed25519 key.
type Signer struct{ key ed25519.PrivateKey }

// NewSigner derives the key from a 32-byte seed (kept in Secrets Manager on
// AWS, in a file under DATA_DIR locally; loading it is the caller's job).
func NewSigner(seed []byte) (*Signer, error) {
	if len(seed) != ed25519.SeedSize {
		return nil, fmt.Errorf("archive: seed must be %d bytes, got %d", ed25519.SeedSize, len(seed))
	}
	return &Signer{key: ed25519.NewKeyFromSeed(seed)}, nil
}

// PublicKey is the verification key as published: "ed25519:<base64>".
func (s *Signer) PublicKey() string {
	return "ed25519:" + base64.StdEncoding.EncodeToString(s.key.Public().(ed25519.PublicKey))
}

// Sign returns the base64 signature over the archive's signed statement.
func (s *Signer) Sign(transferID, accountID, sha256Hex string, size int64) string {
	return base64.StdEncoding.EncodeToString(ed25519.Sign(s.key, Statement(transferID, accountID, sha256Hex, size)))
}

// Statement is the exact byte string an archive signature covers.
func Statement(transferID, accountID, sha256Hex string, size int64) []byte {
	return []byte("platform-api/archive/v1\n" + transferID + "\n" + accountID + "\n" + sha256Hex + "\n" + strconv.FormatInt(size, 10))
}

// Verify checks a signature against a published public key.
func Verify(publicKey, signature, transferID, accountID, sha256Hex string, size int64) bool {
	const prefix = "ed25519:"
	if len(publicKey) <= len(prefix) || publicKey[:len(prefix)] != prefix {
		return false
	}
	pub, err := base64.StdEncoding.DecodeString(publicKey[len(prefix):])
	if err != nil || len(pub) != ed25519.PublicKeySize {
		return false
	}
	sig, err := base64.StdEncoding.DecodeString(signature)
	if err != nil {
		return false
	}
	return ed25519.Verify(pub, Statement(transferID, accountID, sha256Hex, size), sig)
}
