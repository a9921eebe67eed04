package standalone

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/trawler-crawl/trawler/pkg/admin"
)

// AdminTokenFile, in the data directory, holds the admin token a
// standalone generates when --admin-token-file gives none (mode 0600). It
// is kept, so later runs on the directory reuse it and an operator's
// scripts keep working; `trawler ctl --standalone DIR` and `trawler state
// backup --standalone DIR` read it (standalone.json names the token file
// in use, this one or the given one).
const AdminTokenFile = "admin.token"

// adminTokens opens the admin API's tokens: the operator token from
// cfg.AdminTokenFile, or the data directory's generated one, and the
// read-only token if given. It returns the operator token's file,
// absolute, for standalone.json. The data directory must exist.
func adminTokens(cfg Config, log *slog.Logger) (admin.Tokens, string, error) {
	path := cfg.AdminTokenFile
	if path == "" {
		path = filepath.Join(cfg.DataDir, AdminTokenFile)
		generated, err := ensureToken(path)
		if err != nil {
			return admin.Tokens{}, "", err
		}
		if generated {
			log.Info("admin token generated (no --admin-token-file)", "path", path)
		}
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return admin.Tokens{}, "", fmt.Errorf("admin token file: %w", err)
	}
	tokens, err := admin.OpenTokens(abs, cfg.AdminReadOnlyTokenFile, log)
	return tokens, abs, err
}

// ensureToken writes a new random token to path, mode 0600, unless a file
// is there already; it reports whether it wrote one. The token is written
// beside path and renamed into place, so a crash never leaves a partial
// token to be read on the next start.
func ensureToken(path string) (bool, error) {
	if _, err := os.Stat(path); err == nil {
		return false, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return false, fmt.Errorf("admin token file: %w", err)
	}
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return false, fmt.Errorf("generate admin token: %w", err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(hex.EncodeToString(b)+"\n"), 0o600); err != nil {
		return false, fmt.Errorf("write admin token: %w", err)
	}
	// WriteFile keeps the mode of a leftover tmp file: make sure.
	if err := os.Chmod(tmp, 0o600); err != nil {
		_ = os.Remove(tmp)
		return false, fmt.Errorf("write admin token: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return false, fmt.Errorf("write admin token: %w", err)
	}
	return true, nil
}
