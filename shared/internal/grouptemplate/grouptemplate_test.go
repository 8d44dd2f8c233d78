package grouptemplate

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// edit is one change outside the group's own folders: in file, the first
// match of anchor becomes replacement ($0 is the match).
type edit struct {
	file, anchor, replacement string
}

// edits are everything the group needs outside its folders, as the README
// lists it: its line (with its import) in the list of groups. The local
// process, the tests, the OpenAPI generator and infra take from that line
// its worker, its queue and its functions (the group's deploy.Unit); the
// catalogue generator its route rows, its service and its webhook event.
var edits = []edit{
	{"shared/platform/platform.go", `\t\tswapsapi\.On\(sh\),\n`, "$0\t\texampleapi.Group,\n"},
	{"shared/platform/platform.go", `\t"platformapi/shared/groups/databases/databasesapi"\n`, "$0\t\"platformapi/shared/groups/example/exampleapi\"\n"},
}

// generated are the files the generators rewrite for a new route, queue,
// service, event or scope: the catalogues (the scope set is in
// zz_routes.go), the OpenAPI document, the pages docgen writes and both
// SDKs'.
var generated = []string{"shared/groups/public/publicapi/openapi.json", "docs/routes.md", "docs/configuration.md",
	"shared/base/catalog/zz_services.go", "shared/groups/webhooks/zz_events.go", "shared/base/routes/zz_routes.go", "docs/webhooks.md",
	"sdk/go/zz_generated.go", "sdk/go/zz_operations.go", "sdk/typescript/src/schema.d.ts", "sdk/typescript/src/operations.ts"}

// A group with one route, one queue worker and its queue, one managed
// service, one webhook event and one scope of its own needs, outside its
// own folders, only its line in the list of groups, as the README says:
// with just that and the generated files (its route rows and its scope in
// the route table, both SDKs' methods and types), the tree builds, its test
// passes (its service priced, its event known, its route behind its
// scope), and so do the checks of the stack (its queue and functions held
// to what their declared uses mean), the declarations, the names, the
// scope set, the catalogues, the OpenAPI document, the generated pages,
// both SDKs and what its tests link. Every file changed outside its
// folders, generated ones included, is counted and listed.
func TestAnExampleGroupNeedsOnlyTheListedPlaces(t *testing.T) {
	if testing.Short() {
		t.Skip("copies and builds the repository")
	}
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	dir := copyDir(t, root)
	copyTracked(t, root, dir)
	if err := os.CopyFS(dir, os.DirFS("testdata")); err != nil {
		t.Fatal(err)
	}
	outside := map[string]bool{}
	for _, e := range edits {
		path := filepath.Join(dir, e.file)
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		re := regexp.MustCompile(e.anchor)
		loc := re.FindIndex(src)
		if loc == nil {
			t.Fatalf("%s: no %q; update the edits to the file", e.file, e.anchor)
		}
		var out []byte
		out = append(out, src[:loc[0]]...)
		out = re.Expand(out, []byte(e.replacement), src, re.FindSubmatchIndex(src))
		out = append(out, src[loc[1]:]...)
		if err := os.WriteFile(path, out, 0o644); err != nil {
			t.Fatal(err)
		}
		outside[e.file] = true
	}
	run(t, dir, "go", "run", "./shared/internal/catalogen")
	doc := run(t, dir, "go", "run", "./functions/local", "print-openapi")
	if err := os.WriteFile(filepath.Join(dir, generated[0]), []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, dir, "go", "run", "./shared/internal/docgen")
	// The document with the group's route is a valid OpenAPI document.
	run(t, dir, "python3", "-m", "openapi_spec_validator", generated[0])
	// Both SDKs are regenerated, then held to every check make test runs
	// on them: the generated files are current, the Go SDK needs only the
	// standard library, vets and passes its tests, its own and those
	// against a local server; the TypeScript client and its type tests
	// compile (tsc) against the new schema with a method for every
	// operation and its tests pass against a local server; and the
	// document passes the linter's strict rules. They take minutes more
	// (npm, tsc, the servers), so they run in make example-group-test, not
	// in every make test. npm keeps its cache beside the copy, so only the
	// first run downloads the pinned tools.
	if os.Getenv(sdksEnv) != "" {
		if err := os.Mkdir(filepath.Join(dir, ".cache"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join(filepath.Dir(dir), "cache"), filepath.Join(dir, ".cache", "npm")); err != nil {
			t.Fatal(err)
		}
		run(t, dir, "make", "--no-print-directory", "sdk-go-generate", "sdk-ts-generate")
		run(t, dir, "make", "--no-print-directory", "sdk-go-test", "sdk-ts-test", "openapi-lint")
	} else {
		t.Logf("the SDKs' checks run with %s=1 (make example-group-test)", sdksEnv)
	}
	// Every package of the tree compiles (go list -export compiles each
	// one, main packages included, and fails as go build does), and the
	// group's own functions link. go build ./... would also link the
	// thirty other programs, minutes of linking unchanged code that no
	// group's line can break at link time once it compiles.
	run(t, dir, "go", "list", "-export", "-f", "{{.Export}}", "./...")
	run(t, dir, "go", "build", "./functions/examples", "./functions/examples-worker")
	run(t, dir, "go", "vet", "./shared/groups/example", "./shared/groups/example/exampleapi", "./functions/examples", "./functions/examples-worker")
	// Its tests link no other group's HTTP package than the core groups'.
	run(t, dir, "go", "test", "-count=1", "-run", "TestEachGroupsTestsLinkOnlyTheGroupsTheyReach/exampleapi", "./shared/harness/apitest")
	run(t, dir, "go", "test", "-count=1", "-run", "TestEveryOperationIsInADeclaredSection", "./shared/api")
	run(t, dir, "go", "test", "-count=1", "./shared/groups/example/exampleapi", "./shared/groups/keys", "./shared/platform", "./shared/adapters/work", "./shared/internal/docgen", "./shared/internal/catalogen", "./infra/stacks")

	var changed, regenerated []string
	for _, line := range strings.Split(strings.TrimSpace(run(t, dir, "git", "status", "--porcelain", "--untracked-files=all")), "\n") {
		switch path := strings.TrimSpace(line[2:]); {
		case own(path):
		case slices.Contains(generated, path):
			regenerated = append(regenerated, path)
		default:
			changed = append(changed, path)
		}
	}
	want := make([]string, 0, len(outside))
	for f := range outside {
		want = append(want, f)
	}
	slices.Sort(want)
	slices.Sort(changed)
	if !slices.Equal(changed, want) {
		t.Fatalf("files outside the group's folders: %v, want %v", changed, want)
	}
	slices.Sort(regenerated)
	t.Logf("outside its folders the group needed %d files edited by hand, %v, and %d regenerated: %v", len(want), want, len(regenerated), regenerated)
}

// sdksEnv, set, adds both SDKs' regeneration and checks to the test.
const sdksEnv = "EXAMPLE_GROUP_SDKS"

// own reports whether path is in one of the group's folders.
func own(path string) bool {
	for _, dir := range []string{"shared/groups/example/", "shared/groups/example/exampleapi/", "functions/examples/", "functions/examples-worker/"} {
		if strings.HasPrefix(path, dir) {
			return true
		}
	}
	return false
}

// copyDir is an empty directory for the copy of root, the same one each
// run for the same root, held by this run alone. Go keys a package's build
// by its directory, so a copy in a new temporary directory each run would
// compile the whole module again; in the same one, every package the
// example group leaves unchanged comes from the build cache after the
// first run.
func copyDir(t *testing.T, root string) string {
	t.Helper()
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	sum := sha256.Sum256([]byte(root))
	base := filepath.Join(cache, "platformapi-grouptemplate", hex.EncodeToString(sum[:6]))
	if err := os.MkdirAll(filepath.Join(base, "cache"), 0o755); err != nil {
		t.Fatal(err)
	}
	lock, err := os.OpenFile(base+".lock", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lock.Close() })
	dir := filepath.Join(base, "repo")
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// copyTracked copies the files git tracks at root into dir, and makes dir a
// repository with them committed, so that git status names what changed.
func copyTracked(t *testing.T, root, dir string) {
	t.Helper()
	for _, rel := range strings.Split(strings.TrimSpace(run(t, root, "git", "ls-files")), "\n") {
		src := filepath.Join(root, rel)
		info, err := os.Lstat(src)
		if err != nil || !info.Mode().IsRegular() {
			continue // deleted in the work tree, or a symbolic link
		}
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, data, info.Mode().Perm()|fs.FileMode(0o200)); err != nil {
			t.Fatal(err)
		}
	}
	run(t, dir, "git", "init", "-q")
	run(t, dir, "git", "add", "-A")
	run(t, dir, "git", "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "copy")
}

// run runs a command in dir and returns its standard output.
func run(t *testing.T, dir, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s%s", name, strings.Join(args, " "), err, out, stderr.String())
	}
	return string(out)
}
