//! The general engine: any tiktoken-style pattern, split exactly as
//! fancy-regex splits it, by a small backtracking matcher.
//!
//! Supported: literals and escapes (`\n \r \t \f \v \a \e`, `\xHH`,
//! `\x{H..}`, `\uHHHH`, `\UHHHHHHHH`, escaped punctuation), `.`, classes
//! `[...]` and `[^...]` with ranges, nested classes, POSIX `[:alpha:]`
//! classes and class escapes, `\d \D \s \S \w \W \h \H`, `\p{..}`/`\P{..}`/
//! `\pL` for general categories (`L`, `Lu`, `Letter`, `gc=Lu`, ...),
//! `White_Space` and `Any`; groups `(..)`, `(?:..)`, `(?<name>..)`,
//! `(?P<name>..)`, atomic `(?>..)`; flags `i`, `m`, `s`, `x` (inline
//! `(?i)` and scoped `(?i:..)`, with `-`); quantifiers `* + ? {n} {n,}
//! {n,m}`, each greedy, lazy (`?`) or possessive (`+`); lookahead `(?=..)`
//! and `(?!..)`; `^ $ \A \z \Z \b \B`. Anything else (backreferences,
//! lookbehind, set operations in classes, scripts and other properties,
//! `\K \G \R`, ...) is refused with an error naming it and its position.
//!
//! Matching is leftmost-first backtracking, as fancy-regex's (and the
//! `regex` crate's for the parts fancy-regex delegates to it). A
//! quantified single character class (`\p{L}+`, `\s*`, `[^\s]{1,3}`)
//! is one instruction that scans its run and gives it back one character
//! at a time without a stack entry per character, so the tiktoken
//! patterns run in time linear in the text. Other patterns can take
//! polynomial or, with nested quantifiers such as `(a*)*b`, exponential
//! time, as any backtracker. Once one match attempt has tried many choice
//! points, it remembers those it has tried (they fail again), which bounds
//! it by instructions x text length for patterns without a loop that can
//! match empty (`(a|ab)*c` is polynomial; `(a*)*b` and a blow-up inside an
//! atomic group or lookahead stay exponential). fancy-regex delegates such
//! parts to the `regex` crate's automata, or gives up after a million
//! backtracking steps (and tiktoken then panics). A loop whose body matched
//! nothing stops iterating.

use crate::error::{invalid, Result};
use crate::text::unicode::{self, CategorySet};

/// The most instructions a pattern may compile to (counted repetitions are
/// expanded).
const MAX_INSTS: usize = 100_000;
/// The deepest nesting of groups.
pub(crate) const MAX_DEPTH: usize = 200;

/// A compiled pattern of the general engine.
#[derive(Debug, Clone)]
pub struct Regex {
    insts: Vec<Inst>,
    classes: Vec<Class>,
    slots: usize,
}

/// A set of characters.
#[derive(Debug, Clone)]
struct Class {
    items: Vec<Item>,
    negated: bool,
    /// `(?i)`: a character matches if any member of its case folding orbit
    /// is in the items.
    fold: bool,
    /// The answer for each ASCII character, precomputed.
    ascii: u128,
}

#[derive(Debug, Clone)]
enum Item {
    Range(u32, u32),
    Categories(CategorySet),
    WhiteSpace,
    Word,
    Any,
    Class(Box<Class>),
}

impl Item {
    fn matches(&self, c: char) -> bool {
        match self {
            Item::Range(lo, hi) => (*lo..=*hi).contains(&(c as u32)),
            Item::Categories(set) => unicode::props(c).is_in(*set),
            Item::WhiteSpace => unicode::props(c).is_white_space(),
            Item::Word => unicode::props(c).is_word(),
            Item::Any => true,
            Item::Class(class) => class.matches(c),
        }
    }
}

impl Class {
    fn new(items: Vec<Item>, negated: bool, fold: bool) -> Class {
        let mut class = Class {
            items,
            negated,
            fold,
            ascii: 0,
        };
        let mut ascii = 0u128;
        for c in 0..128u8 {
            if class.matches_slow(c as char) {
                ascii |= 1 << c;
            }
        }
        class.ascii = ascii;
        class
    }

    fn single(item: Item, negated: bool, fold: bool) -> Class {
        Class::new(vec![item], negated, fold)
    }

    fn union_has(&self, c: char) -> bool {
        self.items.iter().any(|i| i.matches(c))
    }

    fn matches_slow(&self, c: char) -> bool {
        let mut m = self.union_has(c);
        if !m && self.fold {
            unicode::for_each_case_mate(c, |d| m |= self.union_has(d));
        }
        m != self.negated
    }

    #[inline]
    fn matches(&self, c: char) -> bool {
        if (c as u32) < 128 {
            self.ascii >> c as u32 & 1 != 0
        } else {
            self.matches_slow(c)
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Greed {
    Greedy,
    Lazy,
    Possessive,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Assertion {
    TextStart,
    TextEnd,
    /// `\Z`: the end, or before only `\n`s to the end.
    TextEndNewlines,
    LineStart,
    LineEnd,
    WordBoundary,
    NotWordBoundary,
}

/// The parsed pattern.
#[derive(Debug, Clone)]
enum Node {
    Empty,
    Char(usize),
    Concat(Vec<Node>),
    Alt(Vec<Node>),
    Repeat {
        node: Box<Node>,
        min: u32,
        max: Option<u32>,
        greed: Greed,
    },
    Atomic(Box<Node>),
    Look {
        node: Box<Node>,
        negate: bool,
    },
    Assert(Assertion),
}

impl Node {
    /// Whether the node can match the empty string.
    fn nullable(&self) -> bool {
        match self {
            Node::Empty | Node::Assert(_) | Node::Look { .. } => true,
            Node::Char(_) => false,
            Node::Concat(v) => v.iter().all(Node::nullable),
            Node::Alt(v) => v.iter().any(Node::nullable),
            Node::Repeat { node, min, .. } => *min == 0 || node.nullable(),
            Node::Atomic(n) => n.nullable(),
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum Inst {
    /// One character of a class.
    Char(usize),
    /// Between `min` and `max` characters of a class.
    Run {
        class: usize,
        min: u32,
        max: u32,
        greed: Greed,
    },
    /// Try the first, then the second.
    Split(usize, usize),
    Jmp(usize),
    /// Match the body (ending in `Done`) once, without backtracking into it.
    Atomic {
        body: usize,
        next: usize,
    },
    /// Continue at `next` if the body matches here (or not, if `negate`).
    Look {
        body: usize,
        next: usize,
        negate: bool,
    },
    Assert(Assertion),
    /// Remember the position in a slot (a loop's start).
    Save(usize),
    /// If the position is the slot's (the loop's body matched nothing), go
    /// to the loop's exit.
    IfEmpty {
        slot: usize,
        exit: usize,
    },
    /// The end of the program or of a body.
    Done,
}

/// A choice point.
#[derive(Debug, Clone, Copy)]
enum Frame {
    Alt {
        pc: usize,
        pos: usize,
    },
    /// A greedy run may give back characters down to `min_pos`.
    Back {
        next: usize,
        min_pos: usize,
        pos: usize,
    },
    /// A lazy run may take more characters, `left` of them at most.
    More {
        pc: usize,
        pos: usize,
        left: u32,
    },
    Restore {
        slot: usize,
        value: usize,
    },
}

/// After this many choice points in one match attempt (plus a few per byte
/// of text left), the attempt remembers the choice points it has tried.
const MEMO_AFTER: usize = 4096;

/// The choice points (instruction, position) one top-level match attempt
/// has tried: reached again, they fail again. Only for patterns without a
/// loop that can match empty (whose state is more than the position).
#[derive(Debug, Default)]
struct Memo {
    steps: usize,
    on: bool,
    seen: std::collections::HashSet<(usize, usize)>,
}

/// The flags in force.
#[derive(Debug, Clone, Copy, Default)]
struct Flags {
    i: bool,
    m: bool,
    s: bool,
    x: bool,
}

struct Parser<'a> {
    src: &'a str,
    pos: usize,
    flags: Flags,
    classes: Vec<Class>,
}

fn err<T>(what: impl std::fmt::Display, pos: usize) -> Result<T> {
    invalid!("pattern: {what} at byte {pos}")
}

impl<'a> Parser<'a> {
    fn peek(&self) -> Option<char> {
        self.src[self.pos..].chars().next()
    }

    fn peek_at(&self, k: usize) -> Option<char> {
        self.src[self.pos..].chars().nth(k)
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += c.len_utf8();
        Some(c)
    }

    fn eat(&mut self, s: &str) -> bool {
        if self.src[self.pos..].starts_with(s) {
            self.pos += s.len();
            true
        } else {
            false
        }
    }

    /// Under `x`, skips white space and `#` comments.
    fn skip_space(&mut self) {
        if !self.flags.x {
            return;
        }
        while let Some(c) = self.peek() {
            if c.is_whitespace() {
                self.bump();
            } else if c == '#' {
                while let Some(c) = self.bump() {
                    if c == '\n' {
                        break;
                    }
                }
            } else {
                break;
            }
        }
    }

    fn class(&mut self, class: Class) -> Node {
        self.classes.push(class);
        Node::Char(self.classes.len() - 1)
    }

    fn literal(&mut self, c: char) -> Node {
        let fold = self.flags.i && unicode::props(c).is_cased();
        self.class(Class::single(Item::Range(c as u32, c as u32), false, fold))
    }

    fn alternation(&mut self, depth: usize) -> Result<Node> {
        if depth > MAX_DEPTH {
            return err("groups nested too deeply", self.pos);
        }
        let mut branches = vec![self.concat(depth)?];
        while self.peek() == Some('|') {
            self.bump();
            branches.push(self.concat(depth)?);
        }
        Ok(if branches.len() == 1 {
            branches.pop().unwrap_or(Node::Empty)
        } else {
            Node::Alt(branches)
        })
    }

    fn concat(&mut self, depth: usize) -> Result<Node> {
        let mut items = vec![];
        loop {
            self.skip_space();
            let start = self.pos;
            let atom = match self.peek() {
                None | Some('|') | Some(')') => break,
                Some(_) => self.atom(depth)?,
            };
            let Some(atom) = atom else { continue };
            let node = self.quantifier(atom, start)?;
            items.push(node);
        }
        // One item stands alone (a quantifier over it may then compile to a
        // run); none compiles as Node::Empty does.
        Ok(if items.len() == 1 {
            items.pop().unwrap_or(Node::Empty)
        } else {
            Node::Concat(items)
        })
    }

    /// One atom, or None for a flag group that only set flags.
    fn atom(&mut self, depth: usize) -> Result<Option<Node>> {
        let start = self.pos;
        let c = self.bump().unwrap_or('\0');
        Ok(Some(match c {
            '(' => return self.group(start, depth),
            '[' => {
                let class = self.bracket(start, 0)?;
                self.class(class)
            }
            '.' => {
                let class = if self.flags.s {
                    Class::single(Item::Any, false, false)
                } else {
                    Class::single(Item::Range(10, 10), true, false)
                };
                self.class(class)
            }
            '^' => Node::Assert(if self.flags.m {
                Assertion::LineStart
            } else {
                Assertion::TextStart
            }),
            '$' => Node::Assert(if self.flags.m {
                Assertion::LineEnd
            } else {
                Assertion::TextEnd
            }),
            '\\' => self.escape(start)?,
            '*' | '+' | '?' => {
                return err(format!("quantifier '{c}' without an expression"), start)
            }
            // A `{` with nothing to repeat is a literal, as in fancy-regex.
            c => self.literal(c),
        }))
    }

    /// The counted repetition at `at` as its lower and upper bound's
    /// digits (`{lo}`, `{lo,}`, `{lo,hi}`, `{,hi}`, `{,}`), read as
    /// fancy-regex reads one: ASCII digits and no white space. Anything else
    /// (`{}`, `{ 2 }`, `{a}`) is none: its `{` is a literal.
    fn counted_ahead(&self, at: usize) -> Option<(&'a str, Option<&'a str>)> {
        let src: &'a str = self.src;
        let rest = src[at..].strip_prefix('{')?;
        let inner = &rest[..rest.find('}')?];
        let (lo, hi) = match inner.split_once(',') {
            Some((lo, hi)) => (lo, Some(hi)),
            None => (inner, None),
        };
        let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
        (!inner.is_empty() && digits(lo) && hi.is_none_or(digits)).then_some((lo, hi))
    }

    fn group(&mut self, start: usize, depth: usize) -> Result<Option<Node>> {
        let saved = self.flags;
        enum Kind {
            Plain,
            Atomic,
            Look(bool),
        }
        let kind = if self.eat("?:") {
            Kind::Plain
        } else if self.eat("?=") {
            Kind::Look(false)
        } else if self.eat("?!") {
            Kind::Look(true)
        } else if self.eat("?>") {
            Kind::Atomic
        } else if self.eat("?<=") || self.eat("?<!") {
            return err("lookbehind is not supported", start);
        } else if self.eat("?P<") || self.eat("?<") {
            // The name: anything up to the first `>`, as in fancy-regex.
            let name_start = self.pos;
            let Some(len) = self.src[name_start..].find('>') else {
                return err("unclosed group name", name_start);
            };
            if len == 0 {
                return err("empty group name", name_start);
            }
            self.pos += len + 1;
            Kind::Plain
        } else if self.peek() == Some('?') {
            self.bump();
            // Flags: (?flags) or (?flags:...)
            let mut neg = false;
            loop {
                let at = self.pos;
                match self.bump() {
                    Some('-') if !neg => neg = true,
                    Some('i') => self.flags.i = !neg,
                    Some('m') => self.flags.m = !neg,
                    Some('s') => self.flags.s = !neg,
                    Some('x') => self.flags.x = !neg,
                    Some(')') => {
                        // Flags for the rest of the enclosing group.
                        return Ok(None);
                    }
                    Some(':') => break,
                    Some(c) => return err(format!("unsupported group or flag '{c}'"), at),
                    None => return err("unclosed group", start),
                }
            }
            Kind::Plain
        } else {
            Kind::Plain
        };
        let inner = self.alternation(depth + 1)?;
        if self.bump() != Some(')') {
            return err("unclosed group", start);
        }
        self.flags = saved;
        Ok(Some(match kind {
            Kind::Plain => inner,
            Kind::Atomic => Node::Atomic(Box::new(inner)),
            Kind::Look(negate) => Node::Look {
                node: Box::new(inner),
                negate,
            },
        }))
    }

    fn quantifier(&mut self, mut node: Node, atom_start: usize) -> Result<Node> {
        let mut quantified = false;
        loop {
            self.skip_space();
            let at = self.pos;
            let (min, max) = match self.peek() {
                Some('*') => (0, None),
                Some('+') => (1, None),
                Some('?') => (0, Some(1)),
                Some('{') => {
                    let Some((lo, hi)) = self.counted_ahead(at) else {
                        return Ok(node);
                    };
                    // `{` lo [`,` hi] `}`: an empty lo is 0, an empty hi no bound.
                    let count = |s: &str| match s {
                        "" => Ok(0),
                        _ => s
                            .parse::<u32>()
                            .or_else(|_| err("repetition count too large", at)),
                    };
                    let min = count(lo)?;
                    let max = match hi {
                        None => Some(min),
                        Some("") => None,
                        Some(h) => Some(count(h)?),
                    };
                    if max.is_some_and(|h| h < min) {
                        return err("repetition range is decreasing", at);
                    }
                    // Up to the `}`, which the common bump below skips.
                    self.pos = at + 1 + lo.len() + hi.map_or(0, |h| 1 + h.len());
                    (min, max)
                }
                _ => return Ok(node),
            };
            self.bump();
            if quantified {
                return err("nested quantifier", at);
            }
            if matches!(node, Node::Assert(_) | Node::Look { .. }) {
                return err("quantified assertion is not supported", atom_start);
            }
            let greed = if self.eat("?") {
                Greed::Lazy
            } else if self.eat("+") {
                Greed::Possessive
            } else {
                Greed::Greedy
            };
            node = Node::Repeat {
                node: Box::new(node),
                min,
                max,
                greed,
            };
            quantified = true;
        }
    }

    fn hex(&mut self, at: usize, digits: usize) -> Result<char> {
        let s = if self.eat("{") {
            let Some(close) = self.src[self.pos..].find('}') else {
                return err("unclosed hexadecimal escape", at);
            };
            let s = &self.src[self.pos..self.pos + close];
            self.pos += close + 1;
            s
        } else {
            let s = self.src[self.pos..].get(..digits).unwrap_or("");
            if s.len() != digits {
                return err("malformed hexadecimal escape", at);
            }
            self.pos += digits;
            s
        };
        // At most 8 hexadecimal digits (no sign: from_str_radix takes one).
        let cp = (s.len() <= 8 && s.bytes().all(|b| b.is_ascii_hexdigit()))
            .then(|| u32::from_str_radix(s, 16).ok())
            .flatten();
        match cp.and_then(char::from_u32) {
            Some(c) => Ok(c),
            None => err("invalid hexadecimal escape", at),
        }
    }

    /// A `\p`/`\P` class after the letter; `negated` for `\P`.
    fn property(&mut self, at: usize, mut negated: bool) -> Result<Class> {
        let name: String = if self.eat("{") {
            let Some(close) = self.src[self.pos..].find('}') else {
                return err("unclosed property name", at);
            };
            let s = self.src[self.pos..self.pos + close].to_string();
            self.pos += close + 1;
            s
        } else {
            match self.bump() {
                Some(c) => c.to_string(),
                None => return err("missing property name", at),
            }
        };
        let mut name = name.trim();
        if let Some(n) = name.strip_prefix('^') {
            negated = !negated;
            name = n;
        }
        let mut value = name;
        if let Some((key, v)) = name.split_once(['=', ':']) {
            let key: String = key
                .chars()
                .filter(|c| !matches!(c, ' ' | '_' | '-'))
                .collect::<String>()
                .to_ascii_lowercase();
            if key != "gc" && key != "generalcategory" {
                return err(format!("unsupported property '{name}'"), at);
            }
            value = v;
        }
        let loose: String = value
            .chars()
            .filter(|c| !matches!(c, ' ' | '_' | '-'))
            .collect::<String>()
            .to_ascii_lowercase();
        let item = match loose.as_str() {
            "any" => Item::Any,
            "whitespace" | "wspace" | "space" if value == name => Item::WhiteSpace,
            _ => match unicode::category_set_named(value) {
                Some(set) => Item::Categories(set),
                None => return err(format!("unsupported property '{name}'"), at),
            },
        };
        Ok(Class::single(item, negated, self.flags.i))
    }

    /// An escape after `\` outside a class.
    fn escape(&mut self, at: usize) -> Result<Node> {
        let Some(c) = self.bump() else {
            return err("trailing backslash", at);
        };
        if let Some(class) = self.class_escape(c, at)? {
            return Ok(self.class(class));
        }
        Ok(match c {
            'A' => Node::Assert(Assertion::TextStart),
            'z' => Node::Assert(Assertion::TextEnd),
            'Z' => Node::Assert(Assertion::TextEndNewlines),
            'b' => {
                if self.peek() == Some('{') && self.counted_ahead(self.pos).is_none() {
                    return err("unsupported word boundary form '\\b{'", at);
                }
                Node::Assert(Assertion::WordBoundary)
            }
            'B' => Node::Assert(Assertion::NotWordBoundary),
            _ => {
                let lit = self.literal_escape(c, at)?;
                self.literal(lit)
            }
        })
    }

    /// `\d \s \w \h \p` and their negations, or None.
    fn class_escape(&mut self, c: char, at: usize) -> Result<Option<Class>> {
        let fold = self.flags.i;
        Ok(Some(match c {
            'd' | 'D' => Class::single(
                Item::Categories(unicode::Category::Nd.set()),
                c == 'D',
                fold,
            ),
            's' | 'S' => Class::single(Item::WhiteSpace, c == 'S', fold),
            'w' | 'W' => Class::single(Item::Word, c == 'W', fold),
            'h' | 'H' => Class::new(
                vec![
                    Item::Range(48, 57),
                    Item::Range(65, 70),
                    Item::Range(97, 102),
                ],
                c == 'H',
                false,
            ),
            'p' | 'P' => self.property(at, c == 'P')?,
            _ => return Ok(None),
        }))
    }

    /// A character escape (`\n`, `\x41`, `\.`; `\b` is a backspace here:
    /// outside a class [`escape`](Self::escape) takes it as a word boundary
    /// first).
    fn literal_escape(&mut self, c: char, at: usize) -> Result<char> {
        Ok(match c {
            'a' => '\x07',
            'f' => '\x0c',
            'n' => '\n',
            'r' => '\r',
            't' => '\t',
            'v' => '\x0b',
            'e' => '\x1b',
            'b' => '\x08',
            'x' => self.hex(at, 2)?,
            'u' => self.hex(at, 4)?,
            'U' => self.hex(at, 8)?,
            '0'..='9' => return err("backreferences are not supported", at),
            c if c.is_ascii_alphanumeric() => {
                return err(format!("unsupported escape '\\{c}'"), at);
            }
            c => c,
        })
    }

    /// A bracketed class after its `[` (at `start`).
    fn bracket(&mut self, start: usize, depth: usize) -> Result<Class> {
        if depth > MAX_DEPTH {
            return err("classes nested too deeply", start);
        }
        let negated = self.eat("^");
        let mut items = vec![];
        let mut first = true;
        loop {
            let at = self.pos;
            let Some(c) = self.bump() else {
                return err("unclosed class", start);
            };
            let lo = match c {
                ']' if !first => break,
                '[' if self.peek() == Some(':') => {
                    items.push(self.posix(at)?);
                    first = false;
                    continue;
                }
                '[' => {
                    items.push(Item::Class(Box::new(self.bracket(at, depth + 1)?)));
                    first = false;
                    continue;
                }
                '&' | '-' | '~' if self.peek() == Some(c) => {
                    return err("class set operations are not supported", at);
                }
                '\\' => {
                    let Some(e) = self.bump() else {
                        return err("trailing backslash", at);
                    };
                    if let Some(class) = self.class_escape(e, at)? {
                        items.push(Item::Class(Box::new(class)));
                        first = false;
                        continue;
                    }
                    self.literal_escape(e, at)?
                }
                c => c,
            };
            first = false;
            // A range?
            if self.peek() == Some('-') && self.peek_at(1).is_some_and(|n| n != ']') {
                let dash = self.pos;
                self.bump();
                let hi_at = self.pos;
                let hi = match self.bump() {
                    Some('\\') => {
                        let Some(e) = self.bump() else {
                            return err("trailing backslash", hi_at);
                        };
                        if matches!(e, 'd' | 'D' | 's' | 'S' | 'w' | 'W' | 'h' | 'H' | 'p' | 'P') {
                            return err("invalid range end", hi_at);
                        }
                        self.literal_escape(e, hi_at)?
                    }
                    Some('[') => return err("invalid range end", hi_at),
                    Some(h) => h,
                    None => return err("unclosed class", start),
                };
                if hi < lo {
                    return err("class range is decreasing", dash);
                }
                items.push(Item::Range(lo as u32, hi as u32));
            } else {
                items.push(Item::Range(lo as u32, lo as u32));
            }
        }
        Ok(Class::new(items, negated, self.flags.i))
    }

    /// `[:name:]` after its `[` (at `at`).
    fn posix(&mut self, at: usize) -> Result<Item> {
        let Some(close) = self.src[self.pos..].find(":]") else {
            return err("unclosed POSIX class", at);
        };
        let name = &self.src[self.pos + 1..self.pos + close];
        self.pos += close + 2;
        let (negated, name) = match name.strip_prefix('^') {
            Some(n) => (true, n),
            None => (false, name),
        };
        let r = |ranges: &[(u8, u8)]| -> Vec<Item> {
            ranges
                .iter()
                .map(|&(a, b)| Item::Range(a as u32, b as u32))
                .collect()
        };
        let items = match name {
            "alnum" => r(&[(b'0', b'9'), (b'A', b'Z'), (b'a', b'z')]),
            "alpha" => r(&[(b'A', b'Z'), (b'a', b'z')]),
            "ascii" => r(&[(0, 0x7F)]),
            "blank" => r(&[(b'\t', b'\t'), (b' ', b' ')]),
            "cntrl" => r(&[(0, 0x1F), (0x7F, 0x7F)]),
            "digit" => r(&[(b'0', b'9')]),
            "graph" => r(&[(b'!', b'~')]),
            "lower" => r(&[(b'a', b'z')]),
            "print" => r(&[(b' ', b'~')]),
            "punct" => r(&[(b'!', b'/'), (b':', b'@'), (b'[', b'`'), (b'{', b'~')]),
            "space" => r(&[(b'\t', b'\r'), (b' ', b' ')]),
            "upper" => r(&[(b'A', b'Z')]),
            "word" => r(&[(b'0', b'9'), (b'A', b'Z'), (b'a', b'z'), (b'_', b'_')]),
            "xdigit" => r(&[(b'0', b'9'), (b'A', b'F'), (b'a', b'f')]),
            _ => return err(format!("unknown POSIX class '{name}'"), at),
        };
        Ok(Item::Class(Box::new(Class::new(
            items,
            negated,
            self.flags.i,
        ))))
    }
}

struct Compiler {
    insts: Vec<Inst>,
    slots: usize,
}

impl Compiler {
    fn push(&mut self, inst: Inst) -> Result<usize> {
        if self.insts.len() >= MAX_INSTS {
            return invalid!("pattern: too large (more than {MAX_INSTS} instructions once repetitions are expanded) at byte 0");
        }
        self.insts.push(inst);
        Ok(self.insts.len() - 1)
    }

    fn pc(&self) -> usize {
        self.insts.len()
    }

    fn patch(&mut self, at: usize, inst: Inst) {
        self.insts[at] = inst;
    }

    fn compile(&mut self, node: &Node) -> Result<()> {
        match node {
            Node::Empty => {}
            Node::Char(c) => {
                self.push(Inst::Char(*c))?;
            }
            Node::Concat(v) => {
                for n in v {
                    self.compile(n)?;
                }
            }
            Node::Alt(v) => {
                let mut jumps = vec![];
                for (k, n) in v.iter().enumerate() {
                    if k + 1 < v.len() {
                        let split = self.push(Inst::Split(0, 0))?;
                        self.compile(n)?;
                        jumps.push(self.push(Inst::Jmp(0))?);
                        let next = self.pc();
                        self.patch(split, Inst::Split(split + 1, next));
                    } else {
                        self.compile(n)?;
                    }
                }
                let end = self.pc();
                for j in jumps {
                    self.patch(j, Inst::Jmp(end));
                }
            }
            Node::Atomic(n) => self.sub(n, None)?,
            Node::Look { node, negate } => self.sub(node, Some(*negate))?,
            Node::Assert(a) => {
                self.push(Inst::Assert(*a))?;
            }
            Node::Repeat {
                node,
                min,
                max,
                greed,
            } => {
                if let Node::Char(class) = **node {
                    self.push(Inst::Run {
                        class,
                        min: *min,
                        max: max.unwrap_or(u32::MAX),
                        greed: *greed,
                    })?;
                } else if *greed == Greed::Possessive {
                    let inner = Node::Repeat {
                        node: node.clone(),
                        min: *min,
                        max: *max,
                        greed: Greed::Greedy,
                    };
                    self.sub(&inner, None)?;
                } else {
                    self.repeat(node, *min, *max, *greed == Greed::Greedy)?;
                }
            }
        }
        Ok(())
    }

    /// An atomic group (`look` None) or a lookahead: a body ending in Done.
    fn sub(&mut self, node: &Node, look: Option<bool>) -> Result<()> {
        let at = self.push(Inst::Jmp(0))?;
        self.compile(node)?;
        self.push(Inst::Done)?;
        let next = self.pc();
        self.patch(
            at,
            match look {
                None => Inst::Atomic { body: at + 1, next },
                Some(negate) => Inst::Look {
                    body: at + 1,
                    next,
                    negate,
                },
            },
        );
        Ok(())
    }

    fn repeat(&mut self, node: &Node, min: u32, max: Option<u32>, greedy: bool) -> Result<()> {
        for _ in 0..min {
            self.compile(node)?;
        }
        let split = |body: usize, exit: usize| {
            if greedy {
                Inst::Split(body, exit)
            } else {
                Inst::Split(exit, body)
            }
        };
        let nullable = node.nullable();
        match max {
            Some(max) => {
                let mut splits = vec![];
                for _ in min..max {
                    splits.push(self.push(Inst::Split(0, 0))?);
                    self.compile(node)?;
                }
                let end = self.pc();
                for s in splits {
                    self.patch(s, split(s + 1, end));
                }
            }
            None => {
                let top = self.push(Inst::Split(0, 0))?;
                let slot = self.slots;
                if nullable {
                    self.slots += 1;
                    self.push(Inst::Save(slot))?;
                }
                self.compile(node)?;
                let check = if nullable {
                    Some(self.push(Inst::IfEmpty { slot, exit: 0 })?)
                } else {
                    None
                };
                self.push(Inst::Jmp(top))?;
                let end = self.pc();
                self.patch(top, split(top + 1, end));
                if let Some(c) = check {
                    self.patch(c, Inst::IfEmpty { slot, exit: end });
                }
            }
        }
        Ok(())
    }
}

/// The character at `pos` and its length (`pos` on a boundary, before the
/// end).
#[inline]
fn char_at(text: &str, pos: usize) -> (char, usize) {
    let c = text[pos..].chars().next().unwrap_or('\0');
    (c, c.len_utf8())
}

/// The start of the character that ends at `pos`.
#[inline]
fn prev_boundary(text: &[u8], mut pos: usize) -> usize {
    pos -= 1;
    while pos > 0 && text[pos] & 0xC0 == 0x80 {
        pos -= 1;
    }
    pos
}

impl Regex {
    /// Compiles `source`; see the module documentation for what is
    /// supported.
    pub fn new(source: &str) -> Result<Regex> {
        let mut p = Parser {
            src: source,
            pos: 0,
            flags: Flags::default(),
            classes: vec![],
        };
        let node = p.alternation(0)?;
        if p.pos < source.len() {
            return err("unmatched ')'", p.pos);
        }
        let mut c = Compiler {
            insts: vec![],
            slots: 0,
        };
        c.compile(&node)?;
        c.push(Inst::Done)?;
        Ok(Regex {
            insts: c.insts,
            classes: p.classes,
            slots: c.slots,
        })
    }

    fn assert(&self, a: Assertion, text: &str, pos: usize) -> bool {
        let b = text.as_bytes();
        match a {
            Assertion::TextStart => pos == 0,
            Assertion::TextEnd => pos == b.len(),
            Assertion::TextEndNewlines => b[pos..].iter().all(|&c| c == b'\n'),
            Assertion::LineStart => pos == 0 || b[pos - 1] == b'\n',
            Assertion::LineEnd => pos == b.len() || b[pos] == b'\n',
            Assertion::WordBoundary | Assertion::NotWordBoundary => {
                let before = pos > 0 && {
                    let p = prev_boundary(b, pos);
                    unicode::props(char_at(text, p).0).is_word()
                };
                let after = pos < b.len() && unicode::props(char_at(text, pos).0).is_word();
                (before != after) == (a == Assertion::WordBoundary)
            }
        }
    }

    /// Runs the program from `pc` at `pos` to its `Done`: the end of the
    /// first match in preference order.
    fn exec(
        &self,
        mut pc: usize,
        mut pos: usize,
        text: &str,
        stack: &mut Vec<Frame>,
        slots: &mut [usize],
        mut memo: Option<&mut Memo>,
    ) -> Option<usize> {
        let b = text.as_bytes();
        let base = stack.len();
        if self.slots > 0 {
            memo = None;
        }
        if let Some(m) = memo.as_deref_mut() {
            m.steps = 0;
            m.on = false;
            m.seen.clear();
        }
        loop {
            let ok = match self.insts[pc] {
                Inst::Char(class) => {
                    if pos < b.len() {
                        let (c, l) = char_at(text, pos);
                        if self.classes[class].matches(c) {
                            pos += l;
                            pc += 1;
                            true
                        } else {
                            false
                        }
                    } else {
                        false
                    }
                }
                Inst::Run {
                    class,
                    min,
                    max,
                    greed,
                } => {
                    let class = &self.classes[class];
                    let mut n = 0;
                    let limit = if greed == Greed::Lazy { min } else { max };
                    let mut min_pos = pos;
                    while n < limit && pos < b.len() {
                        let (c, l) = char_at(text, pos);
                        if !class.matches(c) {
                            break;
                        }
                        pos += l;
                        n += 1;
                        if n == min {
                            min_pos = pos;
                        }
                    }
                    if n < min {
                        false
                    } else {
                        match greed {
                            Greed::Greedy if pos > min_pos => stack.push(Frame::Back {
                                next: pc + 1,
                                min_pos,
                                pos,
                            }),
                            Greed::Lazy if max > min => stack.push(Frame::More {
                                pc,
                                pos,
                                left: max - min,
                            }),
                            _ => {}
                        }
                        pc += 1;
                        true
                    }
                }
                Inst::Split(a, alt) => {
                    // A choice point reached again at the same position
                    // failed before (no loop here can match empty): skip
                    // it once the work shows a blow-up.
                    let again = match memo.as_deref_mut() {
                        Some(m) if m.on => !m.seen.insert((pc, pos)),
                        Some(m) => {
                            m.steps += 1;
                            m.on = m.steps > MEMO_AFTER + 4 * (b.len() - pos.min(b.len()));
                            false
                        }
                        None => false,
                    };
                    if again {
                        false
                    } else {
                        stack.push(Frame::Alt { pc: alt, pos });
                        pc = a;
                        true
                    }
                }
                Inst::Jmp(a) => {
                    pc = a;
                    true
                }
                Inst::Atomic { body, next } => match self.exec(body, pos, text, stack, slots, None)
                {
                    Some(e) => {
                        pos = e;
                        pc = next;
                        true
                    }
                    None => false,
                },
                Inst::Look { body, next, negate } => {
                    let found = self.exec(body, pos, text, stack, slots, None).is_some();
                    if found != negate {
                        pc = next;
                        true
                    } else {
                        false
                    }
                }
                Inst::Assert(a) => {
                    if self.assert(a, text, pos) {
                        pc += 1;
                        true
                    } else {
                        false
                    }
                }
                Inst::Save(slot) => {
                    stack.push(Frame::Restore {
                        slot,
                        value: slots[slot],
                    });
                    slots[slot] = pos;
                    pc += 1;
                    true
                }
                Inst::IfEmpty { slot, exit } => {
                    pc = if slots[slot] == pos { exit } else { pc + 1 };
                    true
                }
                Inst::Done => {
                    stack.truncate(base);
                    return Some(pos);
                }
            };
            if ok {
                continue;
            }
            // Backtrack.
            loop {
                if stack.len() == base {
                    return None;
                }
                match stack.pop() {
                    Some(Frame::Alt { pc: p, pos: q }) => {
                        pc = p;
                        pos = q;
                        break;
                    }
                    Some(Frame::Back {
                        next,
                        min_pos,
                        pos: q,
                    }) => {
                        let p = prev_boundary(b, q);
                        if p > min_pos {
                            stack.push(Frame::Back {
                                next,
                                min_pos,
                                pos: p,
                            });
                        }
                        pc = next;
                        pos = p;
                        break;
                    }
                    Some(Frame::More {
                        pc: p,
                        pos: q,
                        left,
                    }) => {
                        let Inst::Run { class, .. } = self.insts[p] else {
                            continue;
                        };
                        if q >= b.len() {
                            continue;
                        }
                        let (c, l) = char_at(text, q);
                        if !self.classes[class].matches(c) {
                            continue;
                        }
                        if left > 1 {
                            stack.push(Frame::More {
                                pc: p,
                                pos: q + l,
                                left: left - 1,
                            });
                        }
                        pc = p + 1;
                        pos = q + l;
                        break;
                    }
                    Some(Frame::Restore { slot, value }) => slots[slot] = value,
                    None => return None,
                }
            }
        }
    }

    /// The leftmost-first match at or after `start`, as (start, end).
    fn find_at(
        &self,
        text: &str,
        start: usize,
        stack: &mut Vec<Frame>,
        slots: &mut [usize],
        memo: &mut Memo,
    ) -> Option<(usize, usize)> {
        let mut s = start;
        loop {
            if let Some(e) = self.exec(0, s, text, stack, slots, Some(memo)) {
                return Some((s, e));
            }
            if s >= text.len() {
                return None;
            }
            s += char_at(text, s).1;
        }
    }

    /// The compiled program's length (the tests compare programs).
    #[cfg(test)]
    pub(crate) fn program_len(&self) -> usize {
        self.insts.len()
    }

    /// Calls `piece(start, end)` for each non-empty match of `text`, as
    /// fancy-regex's `find_iter` finds them (after an empty match, the
    /// search goes on one character further; an empty match right where
    /// the previous match ended is skipped).
    pub fn find_iter(&self, text: &str, mut piece: impl FnMut(usize, usize)) {
        let mut stack = Vec::new();
        let mut slots = vec![0; self.slots];
        let mut memo = Memo::default();
        let mut start = 0;
        let mut last_end: Option<usize> = None;
        while start <= text.len() {
            let Some((s, e)) = self.find_at(text, start, &mut stack, &mut slots, &mut memo) else {
                return;
            };
            if s == e {
                start = if e < text.len() {
                    e + char_at(text, e).1
                } else {
                    e + 1
                };
                if last_end == Some(e) {
                    continue;
                }
            } else {
                piece(s, e);
                start = e;
            }
            last_end = Some(e);
        }
    }

    /// Whether the pattern matches somewhere in `text` (for tests).
    pub fn is_match(&self, text: &str) -> bool {
        let mut stack = Vec::new();
        let mut slots = vec![0; self.slots];
        self.find_at(text, 0, &mut stack, &mut slots, &mut Memo::default())
            .is_some()
    }
}
