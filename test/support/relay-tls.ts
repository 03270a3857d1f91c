/**
 * A throwaway self-signed certificate (P-256, valid 2020–2120) for 127.0.0.1 and localhost,
 * used only to run the NSO simulator over HTTPS in tests. Not a secret of any real system.
 */
export const TEST_TLS_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgvlknMfsiuCiaxAMu
asdLniL8i26OXRxurOHOsq6To9GhRANCAASbrL95rJFMmw9NKMlKZtshws80O4rM
qyTKxe7W8oaT25IMQ2P7k85VXbawDBnXeZl85IuFB/yHHb6jfszUdK8c
-----END PRIVATE KEY-----
`;

export const TEST_TLS_CERT = `-----BEGIN CERTIFICATE-----
MIIBeDCCAR+gAwIBAgIBATAKBggqhkjOPQQDAjAdMRswGQYDVQQDDBJuc28tc2lt
dWxhdG9yLnRlc3QwIBcNMjAwMTAxMDAwMDAwWhgPMjEyMDAxMDEwMDAwMDBaMB0x
GzAZBgNVBAMMEm5zby1zaW11bGF0b3IudGVzdDBZMBMGByqGSM49AgEGCCqGSM49
AwEHA0IABJusv3mskUybD00oyUpm2yHCzzQ7isyrJMrF7tbyhpPbkgxDY/uTzlVd
trAMGdd5mXzki4UH/IcdvqN+zNR0rxyjTjBMMA8GA1UdEwEB/wQFMAMBAf8wGgYD
VR0RBBMwEYcEfwAAAYIJbG9jYWxob3N0MB0GA1UdDgQWBBTsFOcYwQBBxUU/HvG/
ljuwD3jINDAKBggqhkjOPQQDAgNHADBEAiA6JJwyCVqp4bbZxn3h6qRH18HffMhe
SSQbJ67ckGtF+AIgHaiT6p1hyEIHzvrrl0tzj02w6BwR5/Dwd+eoeJSmmmw=
-----END CERTIFICATE-----
`;
