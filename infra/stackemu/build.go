package stackemu

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// FunctionNames are the construct names of the template's functions: the
// functions/ directories whose bootstraps the stack runs.
func (t *Template) FunctionNames() ([]string, error) {
	var names []string
	for _, id := range t.ofType("AWS::Lambda::Function") {
		n, err := constructName(t, id)
		if err != nil {
			return nil, err
		}
		names = append(names, n)
	}
	return names, nil
}

// BuildBootstraps builds each named function for the host, as the deployed
// bootstrap is built (-tags lambda.norpc, -trimpath, -ldflags='-s -w',
// CGO_ENABLED=0) but for this machine's architecture, into dir/<name>, in
// one go build. Without the symbol table and DWARF the 27 links take about
// half the time, and the binaries are the deployed ones but for the
// architecture.
func BuildBootstraps(root, dir string, names []string) error {
	args := []string{"build", "-tags", "lambda.norpc", "-trimpath", "-ldflags=-s -w", "-o", dir + string(os.PathSeparator)}
	for _, n := range names {
		args = append(args, "./functions/"+n)
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("stackemu: go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}

// FunctionEnv is what every function gets from this process's environment
// besides the template's variables and its role's credentials: the SDK
// call bound.
func FunctionEnv() []string {
	var env []string
	for _, k := range []string{"AWS_CALL_TIMEOUT"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}
