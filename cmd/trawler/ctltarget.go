package main

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/trawler-crawl/trawler/services/standalone"
)

// defaultAdminAPI is ctl's --api when neither it nor a standalone names
// another.
const defaultAdminAPI = "http://127.0.0.1:9100"

// standaloneTokenFile is the admin token file of the standalone running on
// dataDir: the one its standalone.json names, else its generated one.
func standaloneTokenFile(dataDir string, e standalone.Endpoints) string {
	if e.AdminTokenFile != "" {
		return e.AdminTokenFile
	}
	return filepath.Join(dataDir, standalone.AdminTokenFile)
}

// ctlTarget is the admin API ctl speaks to and the token file it sends:
// --api and --token-file as given; what they leave out comes from the
// standalone of --standalone DIR, or, when neither --api nor --token-file
// is given, from a standalone running on the default data directory, so
// `trawler ctl status` beside `trawler standalone` needs no flags.
func ctlTarget(o ctlOpts) (api, tokenFile string, err error) {
	api, tokenFile = o.api, o.tokenFile
	dir := o.standalone
	if dir == "" && api == "" && tokenFile == "" {
		if _, err := os.Stat(filepath.Join(standalone.DefaultDataDir, standalone.EndpointsFile)); err == nil {
			dir = standalone.DefaultDataDir
		} else if !errors.Is(err, fs.ErrNotExist) {
			return "", "", err
		}
	}
	if dir != "" {
		e, err := standalone.ReadEndpoints(dir)
		if err != nil {
			return "", "", err
		}
		if api == "" {
			api = "http://" + e.Admin
		}
		if tokenFile == "" {
			tokenFile = standaloneTokenFile(dir, e)
		}
	}
	if api == "" {
		api = defaultAdminAPI
	}
	return api, tokenFile, nil
}
