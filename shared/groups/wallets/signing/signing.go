// Package signing computes what a managed wallet signs and signs it: EIP-191
// personal messages and EIP-712 typed data, as 65-byte r‖s‖v signatures
// with v 27/28, the form wallets and ecrecover-based contracts expect. It
// only ever signs a digest it derived itself from a message or typed data:
// it offers no raw-hash signing, so a caller cannot be tricked into signing a
// transaction hash. It never sees a sealed key and never logs one.
package signing

import (
	"bytes"
	"crypto/ecdsa"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/signer/core/apitypes"

	"platformapi/shared/base/apierr"
	"platformapi/shared/base/strictjson"
)

// MaxPayloadBytes bounds a message (decoded) and a typed-data document (as
// sent): a signature request is small, and hashing or walking an unbounded
// document is work an attacker chooses.
const MaxPayloadBytes = 64 << 10

// Message encodings of a personal_sign request.
const (
	EncodingUTF8 = "utf8"
	EncodingHex  = "hex"
)

// ErrInvalidSignature reports a signature that is malformed, out of range or
// unrecoverable.
var ErrInvalidSignature = errors.New("signing: invalid signature")

// PersonalDigest is the EIP-191 version 0x45 digest of message:
// keccak256("\x19Ethereum Signed Message:\n" ‖ len(message) ‖ message), as
// go-ethereum's accounts.TextHash and every wallet's personal_sign compute it.
// The prefix keeps a signed message from ever being a valid transaction.
func PersonalDigest(message []byte) common.Hash {
	prefix := "\x19Ethereum Signed Message:\n" + strconv.Itoa(len(message))
	return crypto.Keccak256Hash([]byte(prefix), message)
}

// DecodeMessage turns a personal_sign request's message into the bytes
// signed: encoding "utf8" (the default, "") signs the text as UTF-8, "hex"
// signs the bytes of a 0x-prefixed hex string. Errors are validation_failed
// at body.message or body.encoding.
func DecodeMessage(message, encoding string) ([]byte, error) {
	var out []byte
	switch encoding {
	case "", EncodingUTF8:
		if !utf8.ValidString(message) {
			return nil, apierr.Invalid("Invalid message.", apierr.Field("body.message", "not valid UTF-8"))
		}
		out = []byte(message)
	case EncodingHex:
		if len(message) > 2+2*MaxPayloadBytes {
			return nil, tooLarge()
		}
		b, err := hexutil.Decode(message)
		if err != nil {
			return nil, apierr.Invalid("Invalid message.", apierr.Field("body.message", "with encoding hex, must be 0x followed by an even number of hex digits"))
		}
		out = b
	default:
		return nil, apierr.Invalid("Invalid message encoding.", apierr.Field("body.encoding", "must be utf8 or hex"))
	}
	if len(out) == 0 {
		return nil, apierr.Invalid("Invalid message.", apierr.Field("body.message", "required: a non-empty message"))
	}
	if len(out) > MaxPayloadBytes {
		return nil, tooLarge()
	}
	return out, nil
}

func tooLarge() *apierr.Error {
	return apierr.Invalid("Invalid message.", apierr.Field("body.message", "at most %d bytes", MaxPayloadBytes))
}

// TypedDataDigest parses an EIP-712 document ({types, primaryType, domain,
// message}) and returns its signing digest keccak256(0x19 0x01 ‖
// domainSeparator ‖ hashStruct(message)) as go-ethereum's apitypes computes
// it. The document is read strictly: no duplicate or case-variant keys, no
// unknown top-level or domain fields, and JSON numbers kept exact (a number
// read as float64 could be signed as a different integer than was sent).
// Errors are validation_failed at body.typedData, carrying the library's
// reason.
func TypedDataDigest(raw json.RawMessage) (common.Hash, apitypes.TypedData, error) {
	var td apitypes.TypedData
	if len(raw) > MaxPayloadBytes {
		return common.Hash{}, td, invalidTypedData("at most %d bytes", MaxPayloadBytes)
	}
	if err := strictjson.Check(raw); err != nil {
		return common.Hash{}, td, invalidTypedData("%v", err)
	}
	var present map[string]json.RawMessage
	if err := json.Unmarshal(raw, &present); err != nil || present == nil {
		return common.Hash{}, td, invalidTypedData("must be an object with types, primaryType, domain and message")
	}
	for _, k := range []string{"types", "primaryType", "domain", "message"} {
		if v, ok := present[k]; !ok || bytes.Equal(v, []byte("null")) {
			return common.Hash{}, td, invalidTypedData("%s is required", k)
		}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	if err := dec.Decode(&td); err != nil {
		return common.Hash{}, td, invalidTypedData("%v", err)
	}
	if td.PrimaryType == "" {
		return common.Hash{}, td, invalidTypedData("primaryType is required")
	}
	if _, ok := td.Types[td.PrimaryType]; !ok {
		return common.Hash{}, td, invalidTypedData("primaryType %q is not defined in types", td.PrimaryType)
	}
	if _, ok := td.Types["EIP712Domain"]; !ok {
		return common.Hash{}, td, invalidTypedData("types.EIP712Domain is required")
	}
	if unused := unreachableTypes(td.Types, td.PrimaryType); len(unused) > 0 {
		return common.Hash{}, td, apierr.Invalid("Invalid EIP-712 typed data.", apierr.Field("body.typedData.types",
			"%s: no field of %s or EIP712Domain reaches them; a signature signs only what its primary type reaches, so types beyond it would only pad what an approver reads", strings.Join(unused, ", "), td.PrimaryType))
	}
	if len(td.Domain.Map()) == 0 {
		return common.Hash{}, td, invalidTypedData("domain must have at least one of name, version, chainId, verifyingContract, salt")
	}
	message, err := exactNumbers(map[string]any(td.Message))
	if err != nil {
		return common.Hash{}, td, invalidTypedData("%v", err)
	}
	td.Message = message.(map[string]any)
	digest, _, err := apitypes.TypedDataAndHash(td)
	if err != nil {
		return common.Hash{}, td, invalidTypedData("%v", err)
	}
	return common.BytesToHash(digest), td, nil
}

// unreachableTypes are the types no field of primary or of EIP712Domain
// reaches, directly or through other types (arrays included), sorted.
func unreachableTypes(types apitypes.Types, primary string) []string {
	seen := map[string]bool{}
	var visit func(string)
	visit = func(name string) {
		if seen[name] {
			return
		}
		fields, ok := types[name]
		if !ok {
			return
		}
		seen[name] = true
		for _, f := range fields {
			t := f.Type
			for strings.HasSuffix(t, "]") && strings.Contains(t, "[") {
				t = t[:strings.LastIndex(t, "[")] // Mail[2][] is of Mail
			}
			visit(t)
		}
	}
	visit(primary)
	visit("EIP712Domain")
	var out []string
	for name := range types {
		if !seen[name] {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

func invalidTypedData(format string, args ...any) *apierr.Error {
	return apierr.Invalid("Invalid EIP-712 typed data.", apierr.Field("body.typedData", format, args...))
}

// exactNumbers replaces the json.Numbers of a decoded message with
// *big.Int, which apitypes encodes exactly. A number with a fraction or an
// exponent is refused: EIP-712 has no such values, and guessing is signing
// something the caller may not have meant.
func exactNumbers(v any) (any, error) {
	switch t := v.(type) {
	case json.Number:
		s := t.String()
		if strings.ContainsAny(s, ".eE") {
			return nil, fmt.Errorf("number %s is not an integer; send large or fractional values as strings", s)
		}
		n, ok := new(big.Int).SetString(s, 10)
		if !ok {
			return nil, fmt.Errorf("number %s is not an integer", s)
		}
		return n, nil
	case map[string]any:
		for k, e := range t {
			r, err := exactNumbers(e)
			if err != nil {
				return nil, err
			}
			t[k] = r
		}
		return t, nil
	case []any:
		for i, e := range t {
			r, err := exactNumbers(e)
			if err != nil {
				return nil, err
			}
			t[i] = r
		}
		return t, nil
	}
	return v, nil
}

// Sign signs digest with key, returning r‖s‖v with v 27 or 28 (crypto.Sign
// gives 0 or 1, which ecrecover and most verifiers refuse). The signature is
// deterministic (RFC 6979) and low-s.
func Sign(key *ecdsa.PrivateKey, digest common.Hash) ([]byte, error) {
	sig, err := crypto.Sign(digest[:], key)
	if err != nil {
		return nil, err
	}
	sig[crypto.RecoveryIDOffset] += 27
	return sig, nil
}

// Recover returns the address whose key signed digest. sig is 65 bytes
// r‖s‖v with v 27/28 or 0/1. High-s signatures are refused: each has a
// low-s twin, and Sign only makes low-s ones.
func Recover(digest common.Hash, sig []byte) (common.Address, error) {
	if len(sig) != crypto.SignatureLength {
		return common.Address{}, fmt.Errorf("%w: %d bytes, want %d", ErrInvalidSignature, len(sig), crypto.SignatureLength)
	}
	v := sig[crypto.RecoveryIDOffset]
	if v >= 27 {
		v -= 27
	}
	r, s := new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:64])
	if !crypto.ValidateSignatureValues(v, r, s, true) {
		return common.Address{}, fmt.Errorf("%w: r, s or v out of range, or high s", ErrInvalidSignature)
	}
	norm := make([]byte, crypto.SignatureLength)
	copy(norm, sig[:64])
	norm[crypto.RecoveryIDOffset] = v
	pub, err := crypto.SigToPub(digest[:], norm)
	if err != nil {
		return common.Address{}, fmt.Errorf("%w: %v", ErrInvalidSignature, err)
	}
	return crypto.PubkeyToAddress(*pub), nil
}
