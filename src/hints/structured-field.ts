/**
 * A small, strict reader for HTTP Structured Field Values (RFC 9651, formerly RFC 8941):
 * Lists and Dictionaries of Items with Parameters — what the RateLimit fields are made of.
 *
 * As the RFC requires, a field that does not parse is rejected as a whole (`undefined`);
 * there is no partial result for a caller to misread. Parsing is a single left-to-right pass
 * with no backtracking, so hostile input costs time linear in its length.
 */

/** A parsed bare item. Inner lists are kept opaque: no RateLimit field uses them. */
export type BareItem =
  | { readonly kind: 'integer' | 'decimal' | 'date'; readonly value: number }
  | { readonly kind: 'string' | 'token' | 'bytes' | 'display-string'; readonly value: string }
  | { readonly kind: 'boolean'; readonly value: boolean }
  | { readonly kind: 'inner-list' };

/** One list member or dictionary member: its value, and its parameters by key. */
export interface Member {
  /** The dictionary key; `undefined` for list members. */
  readonly key: string | undefined;
  readonly value: BareItem;
  readonly params: ReadonlyMap<string, BareItem>;
}

/** `sf-list`; `undefined` when the text is not a valid List. An empty field is an empty list. */
export function parseList(text: string): Member[] | undefined {
  return parseMembers(text, false);
}

/** `sf-dictionary`; `undefined` when the text is not a valid Dictionary. */
export function parseDictionary(text: string): Member[] | undefined {
  return parseMembers(text, true);
}

/** The integer value of an Integer item, else `undefined`. */
export function integerOf(item: BareItem | undefined): number | undefined {
  return item !== undefined && item.kind === 'integer' ? item.value : undefined;
}

/** The text of a String or Token item (policy names come as either), else `undefined`. */
export function nameOf(item: BareItem | undefined): string | undefined {
  return item !== undefined && (item.kind === 'string' || item.kind === 'token') ? item.value : undefined;
}

const TRUE: BareItem = { kind: 'boolean', value: true };
const INNER_LIST: BareItem = { kind: 'inner-list' };

function parseMembers(text: string, dictionary: boolean): Member[] | undefined {
  if (typeof text !== 'string') return undefined;
  const parser = new Parser(text);
  parser.skipSpaces();
  const members: Member[] = [];
  if (parser.done()) return members;
  for (;;) {
    const member = dictionary ? parser.dictionaryMember() : parser.listMember();
    if (member === undefined) return undefined;
    members.push(member);
    parser.skipOws();
    if (parser.done()) return members;
    if (!parser.eat(44 /* , */)) return undefined;
    parser.skipOws();
    if (parser.done()) return undefined; // a trailing comma is an error
  }
}

class Parser {
  private at = 0;
  constructor(private readonly text: string) {}

  done(): boolean {
    return this.at >= this.text.length;
  }

  private peek(): number {
    return this.at < this.text.length ? this.text.charCodeAt(this.at) : -1;
  }

  eat(c: number): boolean {
    if (this.peek() !== c) return false;
    this.at++;
    return true;
  }

  skipSpaces(): void {
    while (this.peek() === 32) this.at++;
  }

  skipOws(): void {
    for (let c = this.peek(); c === 32 || c === 9; c = this.peek()) this.at++;
  }

  listMember(): Member | undefined {
    const value = this.peek() === 40 /* ( */ ? this.innerList() : this.bareItem();
    if (value === undefined) return undefined;
    const params = this.parameters();
    return params === undefined ? undefined : { key: undefined, value, params };
  }

  dictionaryMember(): Member | undefined {
    const key = this.key();
    if (key === undefined) return undefined;
    let value: BareItem | undefined = TRUE;
    if (this.eat(61 /* = */)) {
      value = this.peek() === 40 ? this.innerList() : this.bareItem();
      if (value === undefined) return undefined;
    }
    const params = this.parameters();
    return params === undefined ? undefined : { key, value, params };
  }

  private innerList(): BareItem | undefined {
    this.at++; // (
    for (;;) {
      this.skipSpaces();
      if (this.eat(41 /* ) */)) return INNER_LIST;
      if (this.bareItem() === undefined || this.parameters() === undefined) return undefined;
      const c = this.peek();
      if (c !== 32 && c !== 41) return undefined;
    }
  }

  private parameters(): Map<string, BareItem> | undefined {
    const params = new Map<string, BareItem>();
    while (this.eat(59 /* ; */)) {
      this.skipSpaces();
      const key = this.key();
      if (key === undefined) return undefined;
      let value: BareItem | undefined = TRUE;
      if (this.eat(61 /* = */)) {
        value = this.bareItem();
        if (value === undefined) return undefined;
      }
      params.set(key, value); // a repeated key overwrites, as the RFC says
    }
    return params;
  }

  /** key = ( lcalpha / "*" ) *( lcalpha / DIGIT / "_" / "-" / "." / "*" ) */
  private key(): string | undefined {
    const start = this.at;
    const first = this.peek();
    if (!(isLcAlpha(first) || first === 42)) return undefined;
    this.at++;
    for (let c = this.peek(); isLcAlpha(c) || isDigit(c) || c === 95 || c === 45 || c === 46 || c === 42; c = this.peek()) {
      this.at++;
    }
    return this.text.slice(start, this.at);
  }

  private bareItem(): BareItem | undefined {
    const c = this.peek();
    if (c === 45 /* - */ || isDigit(c)) return this.number();
    if (c === 34 /* " */) return this.string();
    if (c === 42 /* * */ || isAlpha(c)) return this.token();
    if (c === 58 /* : */) return this.bytes();
    if (c === 63 /* ? */) return this.boolean();
    if (c === 64 /* @ */) return this.date();
    if (c === 37 /* % */) return this.displayString();
    return undefined;
  }

  /** Integer: up to 15 digits; Decimal: up to 12 integer digits and 1–3 fraction digits. */
  private number(): BareItem | undefined {
    const start = this.at;
    const negative = this.eat(45);
    let digits = 0;
    let dot = -1;
    for (;;) {
      const c = this.peek();
      if (isDigit(c)) {
        digits++;
      } else if (c === 46 && dot === -1) {
        if (digits > 12) return undefined;
        dot = this.at;
      } else {
        break;
      }
      this.at++;
      if (digits > 15) return undefined; // 15 for an Integer; 12 + 3 for a Decimal
    }
    if (digits === 0) return undefined;
    const body = this.text.slice(negative ? start + 1 : start, this.at);
    if (dot === -1) {
      const value = Number(body);
      return { kind: 'integer', value: negative ? -value : value };
    }
    const fraction = this.at - dot - 1;
    if (fraction < 1 || fraction > 3) return undefined;
    const value = Number(body);
    return { kind: 'decimal', value: negative ? -value : value };
  }

  private string(): BareItem | undefined {
    this.at++; // "
    let value = '';
    for (;;) {
      const c = this.peek();
      if (c === -1) return undefined;
      this.at++;
      if (c === 34) return { kind: 'string', value };
      if (c === 92 /* \ */) {
        const next = this.peek();
        if (next !== 34 && next !== 92) return undefined;
        this.at++;
        value += String.fromCharCode(next);
      } else if (c < 0x20 || c > 0x7e) {
        return undefined;
      } else {
        value += String.fromCharCode(c);
      }
    }
  }

  /** token = ( ALPHA / "*" ) *( tchar / ":" / "/" ) */
  private token(): BareItem | undefined {
    const start = this.at;
    this.at++;
    for (let c = this.peek(); isTchar(c) || c === 58 || c === 47; c = this.peek()) this.at++;
    return { kind: 'token', value: this.text.slice(start, this.at) };
  }

  private bytes(): BareItem | undefined {
    const start = ++this.at;
    for (let c = this.peek(); c !== 58; c = this.peek()) {
      if (!(isAlpha(c) || isDigit(c) || c === 43 || c === 47 || c === 61)) return undefined;
      this.at++;
    }
    const value = this.text.slice(start, this.at);
    this.at++; // :
    return { kind: 'bytes', value };
  }

  private boolean(): BareItem | undefined {
    this.at++; // ?
    if (this.eat(49 /* 1 */)) return { kind: 'boolean', value: true };
    if (this.eat(48 /* 0 */)) return { kind: 'boolean', value: false };
    return undefined;
  }

  private date(): BareItem | undefined {
    this.at++; // @
    const item = this.number();
    return item !== undefined && item.kind === 'integer' ? { kind: 'date', value: item.value } : undefined;
  }

  /** `%"…"` with lower-case %xx escapes; kept as its raw escaped text (no field here needs it). */
  private displayString(): BareItem | undefined {
    this.at++; // %
    if (!this.eat(34)) return undefined;
    const start = this.at;
    for (;;) {
      const c = this.peek();
      if (c === -1 || c < 0x20 || c > 0x7e) return undefined;
      this.at++;
      if (c === 34) return { kind: 'display-string', value: this.text.slice(start, this.at - 1) };
    }
  }
}

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

function isLcAlpha(c: number): boolean {
  return c >= 97 && c <= 122;
}

function isAlpha(c: number): boolean {
  return (c >= 65 && c <= 90) || isLcAlpha(c);
}

/** tchar (RFC 9110 §5.6.2): "!" / "#" / "$" / "%" / "&" / "'" / "*" / "+" / "-" / "." / "^" / "_" / "`" / "|" / "~" / DIGIT / ALPHA */
function isTchar(c: number): boolean {
  if (isAlpha(c) || isDigit(c)) return true;
  switch (c) {
    case 33:
    case 35:
    case 36:
    case 37:
    case 38:
    case 39:
    case 42:
    case 43:
    case 45:
    case 46:
    case 94:
    case 95:
    case 96:
    case 124:
    case 126:
      return true;
    default:
      return false;
  }
}
