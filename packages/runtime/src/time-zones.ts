/** Whether Intl knows `timeZone` (an IANA zone such as a subscriber's `timezone`). */
export function isTimeZone(timeZone: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone });
    return true;
  } catch {
    return false;
  }
}
