// The client method of an operationId: its dot-separated words in camelCase,
// so "credits.balance.read" is creditsBalanceRead and
// "capabilities.list.byService" is capabilitiesListByService. Shared by the
// generator and the coverage test, so both agree on the mapping.
export function methodName(operationId) {
  return operationId
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w, i) => (i === 0 ? w : w[0].toUpperCase() + w.slice(1)))
    .join("");
}
