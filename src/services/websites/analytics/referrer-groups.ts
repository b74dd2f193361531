/**
 * The search engines and social networks a referrer host is grouped under (a small kept list, as
 * the original's). A host matches an entry when it is the entry or a subdomain of it; the first
 * entry in the list that matches wins.
 */
const SEARCH_ENGINES: readonly (readonly [string, string])[] = [
  ['google.com', 'Google'],
  ['bing.com', 'Bing'],
  ['duckduckgo.com', 'DuckDuckGo'],
  ['yahoo.com', 'Yahoo'],
  ['yandex.ru', 'Yandex'],
  ['yandex.com', 'Yandex'],
  ['baidu.com', 'Baidu'],
  ['ecosia.org', 'Ecosia'],
  ['qwant.com', 'Qwant'],
  ['startpage.com', 'Startpage'],
  ['search.brave.com', 'Brave Search'],
  ['ask.com', 'Ask'],
  ['naver.com', 'Naver'],
  ['seznam.cz', 'Seznam'],
];

const SOCIAL_NETWORKS: readonly (readonly [string, string])[] = [
  ['facebook.com', 'Facebook'],
  ['l.facebook.com', 'Facebook'],
  ['t.co', 'Twitter'],
  ['twitter.com', 'Twitter'],
  ['x.com', 'Twitter'],
  ['instagram.com', 'Instagram'],
  ['linkedin.com', 'LinkedIn'],
  ['lnkd.in', 'LinkedIn'],
  ['reddit.com', 'Reddit'],
  ['pinterest.com', 'Pinterest'],
  ['youtube.com', 'YouTube'],
  ['tiktok.com', 'TikTok'],
  ['tumblr.com', 'Tumblr'],
  ['vk.com', 'VK'],
  ['news.ycombinator.com', 'Hacker News'],
  ['mastodon.social', 'Mastodon'],
  ['bsky.app', 'Bluesky'],
  ['threads.net', 'Threads'],
];

/** A Google of any country ("google.de", "google.co.uk"): its own rule, not one entry each. */
const GOOGLE_COUNTRY = /(?:^|\.)google\.(?:[a-z]{2,3}|com?\.[a-z]{2})$/;

function lookup(list: readonly (readonly [string, string])[], host: string): string | null {
  for (const [domain, name] of list) {
    if (host === domain || host.endsWith(`.${domain}`)) return name;
  }
  return null;
}

export function searchEngine(host: string): string | null {
  return lookup(SEARCH_ENGINES, host) ?? (GOOGLE_COUNTRY.test(host) ? 'Google' : null);
}

export function socialNetwork(host: string): string | null {
  return lookup(SOCIAL_NETWORKS, host);
}
