// A model as people say it: `claude-opus-4-8` is "Claude Opus 4.8", `gpt-5.1-codex-mini` is
// "GPT-5.1 Codex Mini", `gemini-2.5-flash` is "Gemini 2.5 Flash". The id itself stays what is sent and
// shown on hover; an id of a family this does not know is shown as it is (better raw than wrong).

/** Families whose ids read as `<family>-<words and version numbers>`, and how each family is written. */
const FAMILIES: Record<string, string> = { claude: 'Claude', gemini: 'Gemini', qwen: 'Qwen', gpt: 'GPT' };
/** Words written in capitals rather than capitalized. */
const UPPER = new Set(['vl', 'oss', 'xl']);

const capitalize = (word: string) => (UPPER.has(word) ? word.toUpperCase() : word.charAt(0).toUpperCase() + word.slice(1));

export function modelName(id: string): string {
  // A release date (`-20250929`, `@20250929`) and a context tag (`[1m]`) say nothing people choose by.
  const bare = id
    .trim()
    .replace(/\[[^\]]*\]$/, '')
    .replace(/[-@]\d{8}$/, '');
  const match = /^([a-z]+)(\d[\w.]*)?-(.+)$|^([a-z]+)(\d[\w.]*)$/.exec(bare);
  const family = match?.[1] ?? match?.[4];
  if (!match || !family || !(family in FAMILIES)) return id;
  const glued = match[2] ?? match[5]; // `qwen3-coder`: the version is part of the family's word
  const rest = match[3] ?? '';
  const parts: string[] = [];
  // Version numbers next to each other are one version: `4-8` is 4.8, `3-5` is 3.5.
  for (const token of rest.split('-').filter(Boolean)) {
    const last = parts.at(-1);
    if (/^\d+$/.test(token) && last !== undefined && /^\d+(\.\d+)*$/.test(last)) parts[parts.length - 1] = `${last}.${token}`;
    else parts.push(token);
  }
  const words = parts.map((part) => (/^\d/.test(part) ? part : capitalize(part)));
  if (family === 'gpt') {
    // GPT writes its version with a hyphen: GPT-5.1, GPT-4o.
    const [version, ...others] = words;
    return version ? [`GPT-${/^\d/.test(version) ? version.toLowerCase() : version}`, ...others].join(' ') : id;
  }
  return [`${FAMILIES[family]}${glued ?? ''}`, ...words].join(' ');
}
