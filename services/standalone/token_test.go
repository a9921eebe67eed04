package standalone

import (
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// With no --admin-token-file a standalone generates a token into its data
// directory, mode 0600, and later runs reuse it; a given file is used
// where it is, and nothing is generated.
func TestAdminTokens(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	data := t.TempDir()
	tokens, path, err := adminTokens(Config{DataDir: data}, log)
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := filepath.Abs(filepath.Join(data, AdminTokenFile)); path != want {
		t.Fatalf("token file %s, want %s", path, want)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("token file mode %v, want 0600", st.Mode().Perm())
	}
	first := tokens.Operator.Value()
	if !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(first) || tokens.ReadOnly != nil {
		t.Fatalf("generated token %q, read-only %v", first, tokens.ReadOnly)
	}
	again, _, err := adminTokens(Config{DataDir: data}, log)
	if err != nil || again.Operator.Value() != first {
		t.Fatalf("second run: %v, token changed: %v", err, again.Operator.Value() != first)
	}

	// A leftover of a crash while writing does not loosen the mode.
	data2 := t.TempDir()
	if err := os.WriteFile(filepath.Join(data2, AdminTokenFile+".tmp"), []byte("half"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, path, err := adminTokens(Config{DataDir: data2}, log); err != nil {
		t.Fatal(err)
	} else if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Fatalf("token file over a leftover: mode %v", st.Mode().Perm())
	}

	// Given files are used as they are.
	dir := t.TempDir()
	op, ro := filepath.Join(dir, "op"), filepath.Join(dir, "ro")
	_ = os.WriteFile(op, []byte("op-token\n"), 0o600)
	_ = os.WriteFile(ro, []byte("ro-token\n"), 0o600)
	data3 := t.TempDir()
	tokens, path, err = adminTokens(Config{DataDir: data3, AdminTokenFile: op, AdminReadOnlyTokenFile: ro}, log)
	if err != nil || path != op || tokens.Operator.Value() != "op-token" || tokens.ReadOnly.Value() != "ro-token" {
		t.Fatalf("given files: %v %s %+v", err, path, tokens)
	}
	if _, err := os.Stat(filepath.Join(data3, AdminTokenFile)); !os.IsNotExist(err) {
		t.Fatalf("a token was generated although one was given: %v", err)
	}
}
