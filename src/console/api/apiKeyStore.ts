/** The API key lives in this tab's sessionStorage only: closing the tab forgets it. */
const KEY = "awaken.console.apiKey";

export function storedApiKey(): string | null {
  try {
    return window.sessionStorage.getItem(KEY);
  } catch {
    return null;
  }
}

export function storeApiKey(apiKey: string): void {
  window.sessionStorage.setItem(KEY, apiKey);
}

export function forgetApiKey(): void {
  window.sessionStorage.removeItem(KEY);
}
