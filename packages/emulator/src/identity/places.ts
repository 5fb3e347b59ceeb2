/**
 * Where a country puts a session (docs/decisions.md D29), from data kept by others rather than
 * a table typed here: the IANA time zone database's zone table (country, zone, the zone's main
 * city and its coordinates, as moment-timezone ships it) and the Unicode CLDR's likely subtags
 * (the language a country's people most likely speak, through ICU's `Intl.Locale`).
 */
import { createRequire } from 'node:module';

interface ZoneMeta {
  name: string;
  lat: number;
  long: number;
  countries: string[];
}
interface Meta {
  countries: Record<string, { name: string; zones: string[] }>;
  zones: Record<string, ZoneMeta>;
}

/** What a country gives a session. */
export interface Place {
  /** An IANA zone: the one most of the country's own zones keep the time of. */
  timezoneId: string;
  /** That zone's main city: a point inside the country. */
  latitude: number;
  longitude: number;
  /** The country's most likely language as a tag: `de-DE`, `ja-JP`. */
  language: string;
}

let meta: Meta | undefined;
const load = (): Meta => {
  meta ??= createRequire(import.meta.url)('moment-timezone/data/meta/latest.json') as Meta;
  return meta;
};

/** A zone's standard offset in minutes (the smaller of January's and July's: summer time adds). */
function offsetOf(zone: string): number {
  const at = (time: number) => {
    const parts = new Intl.DateTimeFormat('en-US', { timeZone: zone, timeZoneName: 'longOffset' }).formatToParts(time);
    const match = /GMT([+-])(\d\d):(\d\d)/.exec(parts.find((p) => p.type === 'timeZoneName')?.value ?? '');
    return match ? (match[1] === '-' ? -1 : 1) * (Number(match[2]) * 60 + Number(match[3])) : 0;
  };
  return Math.min(at(Date.UTC(2025, 0, 15)), at(Date.UTC(2025, 6, 15)));
}

/**
 * The place of an ISO 3166 alpha-2 country, or undefined for a code the data does not know. Of
 * the zones the country owns (those the zone table lists first for it), the first, in the
 * table's order, of the offset most of them keep: `us` New York, `de` Berlin, `au` Hobart.
 */
export function placeOf(country: string): Place | undefined {
  const code = country.toUpperCase();
  const data = load();
  const zones = (data.countries[code]?.zones ?? [])
    .map((z) => data.zones[z])
    .filter((z): z is ZoneMeta => z !== undefined);
  // Zones of research stations are no place a person browses from.
  const owned = zones.filter((z) => z.countries[0] === code && !z.name.startsWith('Antarctica/'));
  const candidates = owned.length > 0 ? owned : zones;
  if (candidates.length === 0) return undefined;
  const counts = new Map<number, number>();
  for (const z of candidates) counts.set(offsetOf(z.name), (counts.get(offsetOf(z.name)) ?? 0) + 1);
  const most = Math.max(...counts.values());
  const zone = candidates.find((z) => counts.get(offsetOf(z.name)) === most) ?? candidates[0];
  if (!zone) return undefined;
  const likely = new Intl.Locale(`und-${code}`).maximize();
  return {
    timezoneId: zone.name,
    latitude: zone.lat,
    longitude: zone.long,
    language: `${likely.language}-${likely.region ?? code}`,
  };
}
