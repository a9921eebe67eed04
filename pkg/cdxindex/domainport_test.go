package cdxindex

import "testing"

// matchType=domain finds the host on every port, and its subdomains on
// theirs. OutbackCDX's range [host, host+"-") misses "org,a:8080)/", as
// ":" sorts after "-"; Trawler scans the host's ports as well, in key
// order, under one scan cap, and still leaves out other hosts that share
// the name's prefix ("org,ab", "org,a-b", "org,a2").
func TestDomainMatchWithPorts(t *testing.T) {
	h := openTest(t).Handler(HandlerOptions{OpenWrites: true})
	mustPost(t, h, "ports", ""+
		"- 20050101000000 http://a.org/ text/html 200 AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA - - 100 0 w.warc.gz\n"+
		"- 20050101000000 http://a.org:8080/p text/html 200 AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA - - 100 100 w.warc.gz\n"+
		"- 20050101000000 http://a.org:81/ text/html 200 AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA - - 100 200 w.warc.gz\n"+
		"- 20050101000000 http://sub.a.org:8080/ text/html 200 AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA - - 100 300 w.warc.gz\n"+
		"- 20050101000000 http://ab.org/ text/html 200 AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA - - 100 400 w.warc.gz\n"+
		"- 20050101000000 http://a-b.org:8080/ text/html 200 AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA - - 100 500 w.warc.gz\n"+
		"- 20050101000000 http://a2.org/ text/html 200 AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA - - 100 600 w.warc.gz\n")
	const fl = "&fl=urlkey,offset"
	tests := []struct{ name, query, want string }{
		{"domain", "url=a.org&matchType=domain", lines("org,a)/ 0", "org,a,sub:8080)/ 300", "org,a:8080)/p 100", "org,a:81)/ 200")},
		{"domain wildcard", "url=*.a.org", lines("org,a)/ 0", "org,a,sub:8080)/ 300", "org,a:8080)/p 100", "org,a:81)/ 200")},
		{"domain limit spans both ranges", "url=a.org&matchType=domain&limit=3", lines("org,a)/ 0", "org,a,sub:8080)/ 300", "org,a:8080)/p 100")},
		{"domain of a port", "url=http://a.org:8080/&matchType=domain", lines("org,a:8080)/p 100")},
		{"host with a port", "url=http://a.org:8080/&matchType=host", lines("org,a:8080)/p 100")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := mustGet(t, h, "/ports?"+tc.query+fl); got != tc.want {
				t.Errorf("%s:\ngot\n%swant\n%s", tc.query, got, tc.want)
			}
		})
	}
}
