/**
 * Secret forms from IOS, IOS-XR, NX-OS and Junos configurations, and the encodings a log line
 * meets them in. Each entry is a configuration excerpt with `{S}` where the secret stands and
 * a realistic secret for it; the tests put each entry, with its own secret and with random
 * ones, through every encoding and the real logger, and look for the secret in what was written.
 */

export interface CorpusEntry {
  readonly platform: 'ios' | 'ios-xr' | 'nx-os' | 'junos' | 'nso-json' | 'pairs';
  /** The excerpt, `{S}` standing for the secret. */
  readonly template: string;
  readonly secret: string;
  /**
   * `pair`: the secret is the value of a `name=value` pair or the password of a URL, written as
   * these carry values (percent-encoded); `json`: a JSON string member (JSON-escaped); `xml`: an
   * XML element's text (entity-escaped); `cli`: as is.
   */
  readonly form: 'cli' | 'pair' | 'json' | 'xml';
}

const cli = (platform: CorpusEntry['platform'], template: string, secret: string): CorpusEntry => ({ platform, template, secret, form: 'cli' });

export const SECRET_CORPUS: readonly CorpusEntry[] = [
  // IOS / IOS-XE
  cli('ios', 'hostname r1\nenable secret 5 {S}\n!', '$1$mERr$hx5rVt7rPNoS4wqbXKX7m0'),
  cli('ios', 'enable secret 8 {S}', '$8$dsYGNam3K1SIJO$7nv/35M/qr6t.dVc7UY9zrJDWRVqncHub1PE9UlMQFs'),
  cli('ios', 'enable secret 9 {S}', '$9$nhEmQVczB7dqsO$X.HsgL6x1il0RxkOSSvyQYwucySCt7qFm4v7pqCxkKM'),
  cli('ios', 'enable secret {S}', 'Plain-Enable-42'),
  cli('ios', 'enable password 7 {S}', '0822455D0A16544541'),
  cli('ios', 'username admin privilege 15 secret 9 {S}', '$9$2MJBozw/9WUfRk$Ht8Ty0D1HcZc1d5cxE5.zJ3oRvtqkz9T0AW.g1yxhf2'),
  cli('ios', 'username ops password 0 {S}', 'OpsPass#2024'),
  cli('ios', 'username bob algorithm-type scrypt secret {S}', 'Scrypt!Bob77'),
  cli('ios', 'line vty 0 4\n password 7 {S}\n login', '045802150C2E1D1C5A'),
  cli('ios', 'snmp-server community {S} RO 10', 'S3cr3tRO-comm'),
  cli('ios', 'snmp-server community {S} RW', 'rw-C0mmunity!'),
  cli('ios', 'tacacs-server host 10.1.1.1 key 7 {S}', '0822455D0A165B4F'),
  cli('ios', 'tacacs server ISE\n address ipv4 10.1.1.1\n key 7 {S}', '13061E010803557878'),
  cli('ios', 'radius-server host 10.1.1.2 auth-port 1812 acct-port 1813 key {S}', 'Rad1usShared'),
  cli('ios', 'key chain OSPF\n key 1\n  key-string 7 {S}', '110A1016141D5A5E57'),
  cli('ios', 'crypto isakmp key {S} address 0.0.0.0 0.0.0.0', 'IsakmpPSK-99'),
  cli('ios', 'crypto ikev2 keyring KR\n peer P\n  pre-shared-key local {S}', 'Ikev2Local!pk'),
  cli('ios', 'interface Gi0/1\n ip ospf authentication-key 7 {S}', '070C285F4D06'),
  cli('ios', 'interface Gi0/1\n ip ospf message-digest-key 1 md5 7 {S}', '02050D480809'),
  cli('ios', 'router bgp 65000\n neighbor 10.0.0.1 password 7 {S}', '104D000A0618'),
  cli('ios', 'ntp authentication-key 1 md5 {S} 7', '1511021F0725'),
  // SNMPv3 passphrases follow `auth <alg>` and `priv <alg> [bits]`; a v1/v2c trap host's community
  // stands at a position, after the host and its options.
  cli('ios', 'snmp-server user admin grp v3 auth sha {S} priv aes 128 {S}', 'Zebra123-v3'),
  cli('ios', 'snmp-server user admin grp v3 priv aes 256 {S}', 'Lion456-priv'),
  cli('ios', 'snmp-server host 10.1.1.1 version 2c {S}', 'Tiger99-trap'),
  cli('ios', 'snmp-server host 10.1.1.1 {S}\nsnmp-server location lab', 'Tiger-v1host'),
  // Credentials in a URL's user information (any scheme).
  { platform: 'ios', form: 'pair', template: 'archive\n path scp://admin:{S}@10.1.1.9/cfg/$h\n write-memory', secret: 'Zebra77-scp' },
  // A name like a secret spelled with invisible characters, or followed by another space.
  cli('ios', 'enable secret\u2028{S}', 'LineSep-Enable1'),
  cli('ios', 'username ops secret\u3000{S}', 'Ideo-Space-2'),
  cli('ios', 'enable secret\u00A0{S}', 'NoBreak-Space-3'),
  cli('ios', 'username ops sec\u200Bret 0 {S}', 'ZeroWidth-Name-4'),
  // IOS-XR
  cli('ios-xr', 'username admin\n group root-lr\n secret 10 {S}', '$6$Qb1Pk0$Lb5e7cC9lXWyFy4k2F2q1S3u5G7N9q2vTgJmP0a6xQ0rWm1vNnB8kK.'),
  cli('ios-xr', 'username oper secret 5 {S}', '$1$a2b3$Wq0vS9wYy1x2Z3c4d5e6f.'),
  cli('ios-xr', 'router bgp 1\n neighbor 10.0.0.2\n  password encrypted {S}', '0822455D0A16XR'),
  cli('ios-xr', 'key chain K\n key 1\n  key-string password {S}', '01100F175804XR'),
  cli('ios-xr', 'tacacs-server host 10.1.1.3 port 49\n key 7 {S}', '060506324F41XR'),
  // NX-OS
  cli('nx-os', 'username admin password 5 {S}  role network-admin', '$5$KLEHLN$Ab9sWvFp8Gf0yRt1q2W3e4R5t6Y7u8I9o0PaSdFgHj1'),
  cli('nx-os', 'snmp-server community {S} group network-operator', 'NxosComm-7'),
  cli('nx-os', 'tacacs-server key 7 "{S}"', 'NxTacKey77'),
  cli('nx-os', 'radius-server host 10.1.1.4 key 7 "{S}" authentication accounting', 'NxRadKey88'),
  cli('nx-os', 'snmp-server user admin network-admin auth md5 {S} priv aes-128 {S} localizedkey', '0x1f2e3d4c5b6a'),
  cli('nx-os', 'snmp-server host 10.1.1.6 traps version 2c {S} udp-port 162', 'NxTrapComm5'),
  // Junos
  cli(
    'junos',
    'system {\n    root-authentication {\n        encrypted-password "{S}"; ## SECRET-DATA\n    }\n}',
    '$6$Xo0Q$2vLw0Cq1R5GZUu3M1eVbN0wHkYtJpLmQrSs.xyz',
  ),
  cli('junos', 'set system login user ops authentication encrypted-password "{S}"', '$1$kJ9d$3mZc8yq0WwPpR2uVv1tL7/'),
  cli(
    'junos',
    'protocols {\n    bgp {\n        group EXT {\n            authentication-key "{S}"; ## SECRET-DATA\n        }\n    }\n}',
    '$9$Hk5FCtu1hSeK8LxNdsYoaUjq.5T3nCu',
  ),
  cli('junos', 'set system radius-server 10.1.1.5 secret "{S}"', '$9$dAbwgJZjqPf-VYoaZ.mQF3'),
  cli('junos', 'set security ike policy P pre-shared-key ascii-text "{S}"', '$9$Kb4W87NbsYoJ.P5QFn/CuOB'),
  cli('junos', 'snmp {\n    community {S} {\n        authorization read-only;\n    }\n}', 'JunosComm-RO'),
  cli('junos', 'set snmp community {S} authorization read-only', 'JunosComm-set'),
  // Junos XML: an element named like a secret hides the text of its whole subtree.
  {
    platform: 'junos',
    form: 'xml',
    template: '<configuration><snmp><community><name>{S}</name><authorization>read-only</authorization></community></snmp></configuration>',
    secret: 'JunComm1-xml',
  },
  {
    platform: 'junos',
    form: 'xml',
    template: '<system><login><user><name>ops</name><authentication><password><value>{S}</value></password></authentication></user></login></system>',
    secret: 'NestedXml-Pw6',
  },
  {
    platform: 'junos',
    form: 'xml',
    template:
      '<snmp><v3><usm><local-engine><user><name>a</name><authentication-sha><authentication-password>{S}</authentication-password></authentication-sha></user></local-engine></usm></v3></snmp>',
    secret: 'UsmXml-Auth7',
  },
  // NSO JSON (a device's configuration as RESTCONF returns it)
  {
    platform: 'nso-json',
    form: 'json',
    template: '{"tailf-ned-cisco-ios:enable":{"secret":{"type":"9","secret":"{S}"}},"hostname":"r1"}',
    secret: 'Nso-Json-Enable!',
  },
  { platform: 'nso-json', form: 'json', template: '{"tailf-ned-cisco-ios:snmp-server":{"community":[{"name":"{S}","RO":[null]}]}}', secret: 'NsoCommunity9' },
  { platform: 'nso-json', form: 'json', template: '{"junos:system":{"root-authentication":{"encrypted-password":"{S}"}}}', secret: 'JsonRootPw-55' },
  {
    platform: 'nso-json',
    form: 'json',
    template: '{"tailf-ned-cisco-ios:snmp-server":{"user":[{"name":"admin","group":"grp","v3":{"auth":{"sha":{"auth-password":"{S}"}}}}]}}',
    secret: 'NsoUsmAuth-8',
  },
  {
    platform: 'nso-json',
    form: 'json',
    template: '{"usm":{"user":[{"name":"admin","auth":{"sha":{"password":"{S}"}},"priv":{"aes":{"password":"{S}"}}}]}}',
    secret: 'NsoUsmPriv-9',
  },
  {
    platform: 'nso-json',
    form: 'json',
    template: '{"tailf-ned-cisco-ios:snmp-server":{"host":[{"ip-address":"10.1.1.1","community-string":"{S}","version":"2c"}]}}',
    secret: 'NsoTrapHost-10',
  },
  {
    platform: 'nso-json',
    form: 'json',
    template: '{"junos:configuration":{"snmp":{"community":[{"name":"{S}","authorization":"read-only"}]}}}',
    secret: 'NsoJunComm-11',
  },
  // A URL carries its password percent-encoded, in JSON as anywhere.
  { platform: 'nso-json', form: 'pair', template: '{"tailf-ned-cisco-ios:archive":{"path":"scp://admin:{S}@10.1.1.9/cfg"}}', secret: 'NsoUrlPw-12' },
  // name=value pairs after the characters that used to hide them
  { platform: 'pairs', form: 'pair', template: '<pre>password={S}</pre>', secret: 'AfterAngle-1' },
  { platform: 'pairs', form: 'pair', template: 'note "token={S}" end', secret: 'AfterQuote-2' },
  { platform: 'pairs', form: 'pair', template: 'a=1,secret={S},b=2', secret: 'AfterComma-3' },
  { platform: 'pairs', form: 'pair', template: 'auth:api_key={S}', secret: 'AfterColon-4' },
  { platform: 'pairs', form: 'pair', template: 'a=1&pass\u200Bword={S}&b=2', secret: 'ZeroWidth-5' },
  { platform: 'pairs', form: 'pair', template: 'see https://ops:{S}@vault.example/v1 now', secret: 'UrlUserinfo-6' },
];

const xmlEscaped = (text: string): string => text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');

/** The excerpt with `secret` in place, written as its form writes values. */
export const excerptOf = (entry: CorpusEntry, secret: string): string => {
  const written = { pair: encodeURIComponent(secret), json: JSON.stringify(secret).slice(1, -1), xml: xmlEscaped(secret), cli: secret }[entry.form];
  return entry.template.replaceAll('{S}', () => written);
};

/**
 * Every encoding a log line meets an excerpt in, as a text: as is, in a JSON string (escaped
 * quotes and `\n`), in JSON held in a JSON string, in a URL query, in a form body, and as a
 * header value (one line).
 */
export const ENCODINGS: Readonly<Record<string, (excerpt: string) => string>> = {
  'plain text': (excerpt) => excerpt,
  'inside a JSON string': (excerpt) => JSON.stringify({ device: 'r1', cli: excerpt }),
  'JSON in a JSON string': (excerpt) => JSON.stringify({ payload: JSON.stringify({ device: 'r1', cli: excerpt }) }),
  'URL query': (excerpt) => `/restconf/data/x?device=r1&cli=${encodeURIComponent(excerpt)}&depth=2`,
  'form body': (excerpt) => new URLSearchParams({ device: 'r1', cli: excerpt, depth: '2' }).toString(),
  'header value': (excerpt) => excerpt.replaceAll('\n', ' '),
};
