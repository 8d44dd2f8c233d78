// The SDK warns through Node's process when no onDeprecation hook is given;
// the console always gives one, so this declaration only lets it type-check.
declare const process: { emitWarning(message: string, type: string): void };
