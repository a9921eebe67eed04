package composecheck

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/compose-spec/compose-go/v2/types"
)

// DeployDir holds the configuration files the compose stack mounts into
// its monitoring containers, relative to the repository root.
const DeployDir = "deploy"

// checkDeploy checks the files under deploy/: each is used (a file no
// service mounts is stale or mis-mounted), and the Prometheus and Grafana
// files are well-formed and refer only to things that exist.
func checkDeploy(p *types.Project, root string) []error {
	errs := checkUnmounted(p, root)
	errs = append(errs, checkPrometheus(p, root)...)
	return append(errs, checkGrafana(p, root)...)
}

// checkUnmounted reports files under deploy/ that no service bind-mounts.
// Markdown files are notes for operators and are exempt.
func checkUnmounted(p *types.Project, root string) []error {
	var errs []error
	walkErr := filepath.WalkDir(filepath.Join(root, DeployDir), func(file string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || strings.HasSuffix(file, ".md") {
			return nil
		}
		if _, _, ok := mountedAt(p, file); !ok {
			errs = append(errs, fmt.Errorf("%s: no service mounts it", rel(root, file)))
		}
		return nil
	})
	if walkErr != nil {
		errs = append(errs, fmt.Errorf("walk %s: %w", DeployDir, walkErr))
	}
	return errs
}
