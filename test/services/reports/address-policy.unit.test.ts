import { describe, expect, test } from 'vitest';
import { ipLiteral, isPublicAddress } from '../../../src/services/reports/address-policy.js';

describe('reports address policy', () => {
  test.each([
    '127.0.0.1',
    '127.255.255.254',
    '10.0.0.1',
    '10.255.255.255',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.0.1',
    '192.168.255.255',
    '169.254.169.254',
    '0.0.0.0',
    '0.1.2.3',
    '100.64.0.1',
    '100.127.255.255',
    '224.0.0.1',
    '239.255.255.250',
    '255.255.255.255',
    '192.0.2.1',
    '198.18.0.1',
    '240.0.0.1',
    '::1',
    '::',
    'fc00::1',
    'fd12:3456:789a::1',
    'fe80::1',
    'febf::1',
    'ff02::1',
    '::ffff:127.0.0.1',
    '::ffff:10.0.0.1',
    '::ffff:169.254.169.254',
    // IPv4-compatible IPv6 (::/96, deprecated): refused whatever IPv4 address it carries.
    '::7f00:1',
    '::127.0.0.1',
    '[::127.0.0.1]',
    '::a00:1',
    '::808:808',
    '::8.8.8.8',
    '0:0:0:0:0:0:7f00:1',
    '::ffff:0:0',
    '[::1]',
    '2001:db8::1',
    '2002:7f00:1::1',
    '64:ff9b::7f00:1',
    'not-an-ip',
    '',
  ])('%s is refused', (ip) => {
    expect(isPublicAddress(ip)).toBe(false);
  });

  test.each([
    '8.8.8.8',
    '1.1.1.1',
    '93.184.216.34',
    '172.15.255.255',
    '172.32.0.1',
    '100.63.255.255',
    '100.128.0.1',
    '169.253.0.1',
    '2001:4860::8888',
    '2606:4700:4700::1111',
    '::ffff:8.8.8.8',
    '::ffff:808:808',
    '0:0:0:0:0:ffff:808:808',
    '[2001:4860::8888]',
  ])('%s is allowed', (ip) => {
    expect(isPublicAddress(ip)).toBe(true);
  });

  test('IP literals of URL host names', () => {
    expect(ipLiteral('127.0.0.1')).toBe('127.0.0.1');
    expect(ipLiteral('[::1]')).toBe('::1');
    expect(ipLiteral(new URL('http://[::ffff:127.0.0.1]/').hostname)).toBe('::ffff:7f00:1');
    expect(isPublicAddress(ipLiteral(new URL('http://[::ffff:127.0.0.1]/').hostname)!)).toBe(false);
    expect(ipLiteral(new URL('http://[::127.0.0.1]/').hostname)).toBe('::7f00:1');
    expect(isPublicAddress(ipLiteral(new URL('http://[::127.0.0.1]/').hostname)!)).toBe(false);
    expect(ipLiteral('example.com')).toBeUndefined();
    expect(ipLiteral('localhost')).toBeUndefined();
  });
});
