package mitm

import (
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"strings"
	"testing"
)

func TestCACertificate(t *testing.T) {
	ca, err := NewCA()
	if err != nil {
		t.Fatalf("NewCA: %v", err)
	}
	block, rest := pem.Decode(ca.CertPEM())
	if block == nil || block.Type != "CERTIFICATE" || len(rest) != 0 {
		t.Fatalf("CertPEM is not one PEM certificate")
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatalf("parse CA: %v", err)
	}
	if !cert.IsCA || cert.KeyUsage&x509.KeyUsageCertSign == 0 {
		t.Errorf("CA cert: IsCA=%v KeyUsage=%b", cert.IsCA, cert.KeyUsage)
	}
	if !strings.HasPrefix(cert.Subject.CommonName, "Trawler render proxy CA ") {
		t.Errorf("CA CN = %q", cert.Subject.CommonName)
	}
	if got := cert.NotAfter.Sub(cert.NotBefore); got < 30*24*3600e9 || got > 31*24*3600e9 {
		t.Errorf("CA validity %v, want about 30 days and an hour", got)
	}
	if err := cert.CheckSignatureFrom(cert); err != nil {
		t.Errorf("CA is not self-signed: %v", err)
	}
	if cert.SerialNumber.BitLen() > 128 || cert.SerialNumber.Sign() <= 0 {
		t.Errorf("serial %v out of range", cert.SerialNumber)
	}
	other, err := NewCA()
	if err != nil {
		t.Fatalf("NewCA: %v", err)
	}
	if other.SPKIHash() == ca.SPKIHash() {
		t.Errorf("two CAs share a leaf key")
	}
}

func TestLeafFor(t *testing.T) {
	ca, err := NewCA()
	if err != nil {
		t.Fatalf("NewCA: %v", err)
	}
	tests := []struct {
		host   string
		verify x509.VerifyOptions
	}{
		{host: "example.test", verify: x509.VerifyOptions{DNSName: "example.test"}},
		{host: "Sub.Example.TEST", verify: x509.VerifyOptions{DNSName: "sub.example.test"}},
		{host: "10.1.2.3", verify: x509.VerifyOptions{DNSName: "10.1.2.3"}},
		{host: "::1", verify: x509.VerifyOptions{DNSName: "::1"}},
	}
	for _, tt := range tests {
		t.Run(tt.host, func(t *testing.T) {
			leaf, err := ca.leafFor(tt.host)
			if err != nil {
				t.Fatalf("leafFor: %v", err)
			}
			if len(leaf.Certificate) != 2 {
				t.Fatalf("chain has %d certificates, want leaf and CA", len(leaf.Certificate))
			}
			x, err := x509.ParseCertificate(leaf.Certificate[0])
			if err != nil {
				t.Fatalf("parse leaf: %v", err)
			}
			opts := tt.verify
			opts.Roots = ca.Pool()
			opts.KeyUsages = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
			if _, err := x.Verify(opts); err != nil {
				t.Errorf("verify with CA pool: %v", err)
			}
			opts.Roots = x509.NewCertPool()
			if _, err := x.Verify(opts); err == nil {
				t.Errorf("leaf verified without the CA")
			}
			sum := sha256.Sum256(x.RawSubjectPublicKeyInfo)
			if got := base64.StdEncoding.EncodeToString(sum[:]); got != ca.SPKIHash() {
				t.Errorf("leaf SPKI hash %s, SPKIHash() %s", got, ca.SPKIHash())
			}
			if x.NotAfter.After(ca.cert.NotAfter) {
				t.Errorf("leaf NotAfter %v after CA's %v", x.NotAfter, ca.cert.NotAfter)
			}
			again, err := ca.leafFor(tt.host)
			if err != nil || again != leaf {
				t.Errorf("second leafFor did not return the cached leaf (err %v)", err)
			}
		})
	}
	if _, err := ca.leafFor(""); err == nil {
		t.Errorf("leafFor(\"\") succeeded")
	}
}

func TestLeafCacheBounded(t *testing.T) {
	ca, err := NewCA()
	if err != nil {
		t.Fatalf("NewCA: %v", err)
	}
	first, err := ca.leafFor("host0.test")
	if err != nil {
		t.Fatalf("leafFor: %v", err)
	}
	for i := 1; i <= maxLeaves; i++ {
		if _, err := ca.leafFor(fmt.Sprintf("host%d.test", i)); err != nil {
			t.Fatalf("leafFor: %v", err)
		}
	}
	ca.mu.Lock()
	n, m := ca.order.Len(), len(ca.leaves)
	ca.mu.Unlock()
	if n != maxLeaves || m != maxLeaves {
		t.Fatalf("cache holds %d/%d leaves, want %d", n, m, maxLeaves)
	}
	again, err := ca.leafFor("host0.test")
	if err != nil {
		t.Fatalf("leafFor: %v", err)
	}
	if again == first {
		t.Errorf("oldest leaf was not evicted")
	}
}
