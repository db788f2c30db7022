/// Certificates for tests that only need a parsable trust root (nothing connects with them).
enum NetworkCertificates {
    /// A self-signed P-256 certificate, `CN=Rooftop Test Certificate` (its key was discarded).
    static let selfSigned = """
        -----BEGIN CERTIFICATE-----
        MIIBmjCCAUGgAwIBAgIUcsruYXlGr1r/P/ttm8OLjQ5IND8wCgYIKoZIzj0EAwIw
        IzEhMB8GA1UEAwwYUm9vZnRvcCBUZXN0IENlcnRpZmljYXRlMB4XDTI2MTEyMjA0
        MzMwMloXDTM2MTExOTA0MzMwMlowIzEhMB8GA1UEAwwYUm9vZnRvcCBUZXN0IENl
        cnRpZmljYXRlMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE7suAYgR2je7k1TBJ
        sFdzdivsG1jRV/tL2wHjL6fX6YhTCMDxf940oKLcAZFmYGAXiT+bn9XH19uSIyIU
        dHDQXKNTMFEwHQYDVR0OBBYEFHEv12BSKsHVt54rkrLMjqU86sdOMB8GA1UdIwQY
        MBaAFHEv12BSKsHVt54rkrLMjqU86sdOMA8GA1UdEwEB/wQFMAMBAf8wCgYIKoZI
        zj0EAwIDRwAwRAIgIWwdvGNrlwp0XtB9D4n3TvokiQcQQ0xnlrU2obPojCsCIHEI
        wYxW+FTz5VTci/EIFVjas8K7bXpgdfsY/5co1Ivy
        -----END CERTIFICATE-----
        """
}
