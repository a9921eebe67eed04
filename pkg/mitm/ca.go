package mitm

import (
	"container/list"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"strings"
	"sync"
	"time"
)

// maxLeaves bounds the leaf cache: a long render run visits many hosts, and
// an unbounded map would grow for the life of the process.
const maxLeaves = 1024

// CA is a per-run certificate authority. One leaf key pair is shared by all
// minted leaf certificates, so a browser can be told to trust exactly that
// key (Chromium's --ignore-certificate-errors-spki-list) and nothing else
// trusts it. A CA is safe for concurrent use.
type CA struct {
	cert    *x509.Certificate
	certDER []byte
	key     *ecdsa.PrivateKey
	leafKey *ecdsa.PrivateKey
	spki    string

	mu     sync.Mutex
	leaves map[string]*list.Element // host -> element holding *leafEntry
	order  *list.List               // oldest first, for eviction
}

type leafEntry struct {
	host string
	cert *tls.Certificate
}

// NewCA creates a fresh CA (an ECDSA P-256 self-signed certificate valid
// from an hour ago for 30 days) and the single ECDSA P-256 leaf key.
func NewCA() (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("mitm: generate CA key: %w", err)
	}
	leafKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("mitm: generate leaf key: %w", err)
	}
	serial, err := randomSerial()
	if err != nil {
		return nil, err
	}
	var tag [8]byte
	if _, err := rand.Read(tag[:]); err != nil {
		return nil, fmt.Errorf("mitm: random CA name: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "Trawler render proxy CA " + hex.EncodeToString(tag[:])},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(30 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		// Leaves are signed directly; forbidding intermediates limits what a
		// leaked CA key could be used for.
		MaxPathLenZero: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("mitm: create CA certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("mitm: parse CA certificate: %w", err)
	}
	spkiDER, err := x509.MarshalPKIXPublicKey(&leafKey.PublicKey)
	if err != nil {
		return nil, fmt.Errorf("mitm: marshal leaf public key: %w", err)
	}
	sum := sha256.Sum256(spkiDER)
	return &CA{
		cert:    cert,
		certDER: der,
		key:     key,
		leafKey: leafKey,
		spki:    base64.StdEncoding.EncodeToString(sum[:]),
		leaves:  make(map[string]*list.Element),
		order:   list.New(),
	}, nil
}

// CertPEM returns the CA certificate, PEM-encoded.
func (c *CA) CertPEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.certDER})
}

// SPKIHash returns base64 (standard encoding) of the SHA-256 of the leaf
// public key's DER SubjectPublicKeyInfo: the value Chromium's
// --ignore-certificate-errors-spki-list takes.
func (c *CA) SPKIHash() string { return c.spki }

// Pool returns a new certificate pool holding only the CA certificate.
func (c *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(c.cert)
	return p
}

// leafFor returns a leaf certificate for host (a DNS name or an IP address
// literal), minting and caching it on first use. The chain includes the CA
// certificate so clients that only hold the CA's SPKI can still build it.
func (c *CA) leafFor(host string) (*tls.Certificate, error) {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if host == "" {
		return nil, errors.New("mitm: leaf certificate for empty host name")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.leaves[host]; ok {
		return el.Value.(*leafEntry).cert, nil
	}
	// Minting under the lock is deliberate: an ECDSA signature is cheap, and
	// it stops concurrent handshakes for one host minting duplicates.
	cert, err := c.mint(host)
	if err != nil {
		return nil, err
	}
	c.leaves[host] = c.order.PushBack(&leafEntry{host: host, cert: cert})
	for c.order.Len() > maxLeaves {
		oldest := c.order.Front()
		c.order.Remove(oldest)
		delete(c.leaves, oldest.Value.(*leafEntry).host)
	}
	return cert, nil
}

func (c *CA) mint(host string) (*tls.Certificate, error) {
	serial, err := randomSerial()
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		NotBefore:    time.Now().Add(-time.Hour),
		// A leaf must never outlive its issuer, or verifiers reject it.
		NotAfter:    c.cert.NotAfter,
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if ip := net.ParseIP(host); ip != nil {
		tmpl.IPAddresses = []net.IP{ip}
	} else {
		tmpl.DNSNames = []string{host}
	}
	// CommonName is limited to 64 characters by RFC 5280; the SAN is what
	// verifiers use anyway.
	if len(host) <= 64 {
		tmpl.Subject = pkix.Name{CommonName: host}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, c.cert, &c.leafKey.PublicKey, c.key)
	if err != nil {
		return nil, fmt.Errorf("mitm: create leaf certificate for %q: %w", host, err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("mitm: parse leaf certificate for %q: %w", host, err)
	}
	return &tls.Certificate{
		Certificate: [][]byte{der, c.certDER},
		PrivateKey:  c.leafKey,
		Leaf:        leaf,
	}, nil
}

// randomSerial returns a random positive 128-bit serial number.
func randomSerial() (*big.Int, error) {
	// Draw from [0, 2^128-1) and add one: zero is not a valid serial.
	limit := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 128), big.NewInt(1))
	n, err := rand.Int(rand.Reader, limit)
	if err != nil {
		return nil, fmt.Errorf("mitm: random serial: %w", err)
	}
	return n.Add(n, big.NewInt(1)), nil
}
