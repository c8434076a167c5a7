//! The splitters against fancy-regex (the engine tiktoken runs): seeded
//! random strings over an alphabet of every class the patterns
//! distinguish, adversarial inputs, and the errors of the general engine.
//! The corpus comparisons are in `tests/pretok.rs`.

use super::*;
use fancy_regex::Regex as Fancy;

/// The p50k_base / r50k_base (GPT-2) pattern.
const P50K: &str = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+";

/// fancy-regex's non-empty matches, or None if it gives up (backtracking
/// limit).
fn oracle(re: &Fancy, text: &str) -> Option<Vec<(usize, usize)>> {
    let mut v = vec![];
    for m in re.find_iter(text) {
        let m = m.ok()?;
        if m.start() < m.end() {
            v.push((m.start(), m.end()));
        }
    }
    Some(v)
}

/// Characters of every class the patterns tell apart.
const ALPHABET: &[char] = &[
    // ASCII letters, the contraction letters among them, digits.
    'a',
    'b',
    's',
    't',
    'r',
    'e',
    'v',
    'm',
    'l',
    'd',
    'k',
    'A',
    'S',
    'T',
    'R',
    'E',
    'V',
    'M',
    'L',
    'D',
    'K',
    'Z',
    '0',
    '5',
    '9', // white space
    ' ',
    ' ',
    ' ',
    '\t',
    '\n',
    '\r',
    '\x0b',
    '\x0c',
    '\u{85}',
    '\u{a0}',
    '\u{2028}',
    '\u{2029}',
    '\u{3000}',
    '\u{1680}', // punctuation and symbols
    '\'',
    '\'',
    '/',
    '.',
    ',',
    '!',
    '"',
    '-',
    '_',
    '(',
    '$',
    '+',
    '<',
    '#',
    '\\',
    '\0',
    '\u{7f}',
    '\u{80}', // the first code point past ASCII (the classes' table ends before it)
    // letters that fold to ASCII, other cased letters
    '\u{17f}',
    '\u{212a}',
    'é',
    'É',
    'ß',
    'İ',
    'ı',
    'ǅ',
    'ʰ',
    'ᾈ',
    'Σ',
    'ς',
    'я',
    'Я',
    // other letters
    '中',
    '日',
    'ا',
    'א',
    'ก',
    'क',
    '한',
    'ー', // marks
    '\u{301}',
    '\u{903}',
    '\u{20dd}',
    '\u{fe0f}',
    '\u{93f}',
    '\u{e31}', // numbers
    '٣',
    'Ⅻ',
    '½',
    '²',
    '𝟙', // others
    '\u{200d}',
    '\u{200b}',
    '\u{feff}',
    '😀',
    '\u{1f3fb}',
    '€',
    '—',
    '«',
    '’',
    '\u{e000}',
    '\u{378}',
    '\u{10ffff}',
    '\u{1f468}',
    '\u{1f469}',
];

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// A random string: characters of the alphabet, sometimes in runs.
fn random_text(rng: &mut Rng, max_len: usize) -> String {
    let len = rng.below(max_len + 1);
    let mut s = String::new();
    while s.chars().count() < len {
        let c = ALPHABET[rng.below(ALPHABET.len())];
        let reps = if rng.below(4) == 0 {
            1 + rng.below(5)
        } else {
            1
        };
        for _ in 0..reps {
            s.push(c);
        }
    }
    s
}

fn check(pattern: &Pattern, fancy: &Fancy, text: &str, what: &str) -> bool {
    let Some(expected) = oracle(fancy, text) else {
        return false;
    };
    let got = pattern.pieces(text);
    if got != expected {
        let k = got
            .iter()
            .zip(&expected)
            .take_while(|(a, b)| a == b)
            .count();
        let piece = |v: &[(usize, usize)]| v.get(k).map(|&(s, e)| &text[s..e]);
        let around = &text[expected.get(k.saturating_sub(2)).map_or(0, |p| p.0)..];
        let around: String = around.chars().take(60).collect();
        panic!(
            "{what}: piece {k} differs (text of {} bytes, from {around:?}): expected {:?}, got {:?}",
            text.len(),
            piece(&expected),
            piece(&got)
        );
    }
    true
}

/// The patterns with the splitter that runs each (hand-written or general).
fn cases() -> Vec<(&'static str, &'static str, Pattern)> {
    let mut v = vec![];
    for (name, src) in [
        ("o200k", Pattern::O200K),
        ("cl100k", Pattern::CL100K),
        ("llama3", Pattern::LLAMA3),
    ] {
        let hand = Pattern::compile(src).unwrap();
        assert!(hand.is_hand_written(), "{name}");
        v.push((name, src, hand));
        v.push((name, src, Pattern::compile_general(src).unwrap()));
    }
    v.push(("p50k", P50K, Pattern::compile(P50K).unwrap()));
    v
}

#[test]
fn random_strings_match_fancy_regex() {
    let n: usize = std::env::var("CUPEL_PRETOK_RANDOM")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(4000);
    for (name, src, pattern) in cases() {
        let fancy = Fancy::new(src).unwrap();
        let what = format!(
            "{name} ({})",
            if pattern.is_hand_written() {
                "hand-written"
            } else {
                "general"
            }
        );
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ name.len() as u64);
        for _ in 0..n {
            let text = random_text(&mut rng, 24);
            assert!(check(&pattern, &fancy, &text, &what));
        }
    }
}

/// Inputs made to hit each branch and boundary, and long runs.
fn adversarial(len: usize) -> Vec<String> {
    let mut v: Vec<String> = vec![];
    for unit in [
        "a",
        "A",
        " ",
        "1",
        "\n",
        "\r\n",
        "\r",
        "中",
        "'",
        "'s",
        // Lead bytes next to long s's (C5 BF): ő is C5 91, 大 is E5 A4 A7.
        "'ſ'ő'大",
        "aA",
        "Aa",
        "A'",
        "a's",
        "\u{301}",
        " \u{301}",
        "\u{a0}",
        "\u{2028}",
        "\t",
        "/",
        "!\n",
        " !",
        "😀",
        "\u{1f44d}\u{1f3fd}",
        "a\u{301}",
        "ʰ",
        "ǅ",
        "٣",
        " \n",
        "\n ",
        "  a",
        ". ",
        "\u{200d}",
        "'S",
        "'\u{17f}",
    ] {
        v.push(unit.repeat(len / unit.len().max(1)));
        v.push(format!("x{}y", unit.repeat(len / unit.len().max(1) / 2)));
        v.push(format!("{} ", unit.repeat(3)));
        v.push(format!("{}\n", unit.repeat(3)));
        v.push(format!("{}1", unit.repeat(3)));
    }
    let classes = [
        "a", "A", "ǅ", "ʰ", "中", "\u{301}", "\u{903}", "\u{20dd}", "1", "Ⅻ", "½", " ", "\t", "\n",
        "\r", "\u{a0}", "\u{2028}", "\u{85}", "'", "/", ".", "😀", "\u{200d}", "\u{378}", "'s",
        "'LL", "'re",
    ];
    for a in classes {
        for b in classes {
            for c in classes {
                v.push(format!("{a}{b}{c}"));
            }
        }
    }
    v.push("don't we'll they're I'VE you'D 'tis O'Neil".into());
    v.push("\u{301}\u{301}ABC \u{301}abc \u{301}Abc".into());
    v.push("   \n\n   \r\n \t \u{a0}\u{2028}x  ".into());
    v
}

#[test]
fn adversarial_inputs_match_fancy_regex() {
    for (name, src, pattern) in cases() {
        let fancy = Fancy::new(src).unwrap();
        let what = format!(
            "{name} ({})",
            if pattern.is_hand_written() {
                "hand-written"
            } else {
                "general"
            }
        );
        for text in adversarial(3000) {
            assert!(
                check(&pattern, &fancy, &text, &what),
                "{what}: fancy-regex gave up on {text:?}"
            );
        }
    }
}

#[test]
fn split_while_gives_the_pieces_of_split_up_to_the_first_refused() {
    let mut rng = Rng(11);
    for (name, _, pattern) in cases() {
        for _ in 0..300 {
            let text = random_text(&mut rng, 30);
            let all = pattern.pieces(&text);
            // Every piece accepted: all of them.
            let mut got = vec![];
            pattern.split_while(&text, |s, e| {
                got.push((s, e));
                true
            });
            assert_eq!(got, all, "{name}: {text:?}");
            // Refusing the k-th piece: the first k + 1 pieces, no more.
            for k in 0..all.len() {
                let mut got = vec![];
                pattern.split_while(&text, |s, e| {
                    got.push((s, e));
                    got.len() <= k
                });
                assert_eq!(got, all[..=k], "{name}: {text:?}, refused piece {k}");
            }
        }
    }
}

#[test]
fn hand_written_pieces_tile_the_text() {
    let mut rng = Rng(7);
    for (_, _, pattern) in cases().into_iter().filter(|c| c.2.is_hand_written()) {
        for _ in 0..2000 {
            let text = random_text(&mut rng, 40);
            let mut at = 0;
            pattern.split(&text, |s, e| {
                assert!(s == at && e > s);
                at = e;
            });
            assert_eq!(at, text.len());
        }
    }
}

#[test]
fn megabyte_runs_are_single_pieces_or_linear() {
    // fancy-regex gives up on some of these (its backtracking limit): the
    // expected pieces are worked out from the pattern instead.
    let mb = 1 << 20;
    let o200k = Pattern::compile(Pattern::O200K).unwrap();
    let cl100k = Pattern::compile(Pattern::CL100K).unwrap();
    for p in [&o200k, &cl100k] {
        assert_eq!(p.pieces(&"a".repeat(mb)), [(0, mb)]);
        assert_eq!(p.pieces(&" ".repeat(mb)), [(0, mb)]);
        assert_eq!(p.pieces(&"1".repeat(3 * mb)).len(), mb);
        assert_eq!(p.pieces(&"中".repeat(mb)), [(0, 3 * mb)]);
        let mut s = " ".repeat(mb);
        s.push('x');
        assert_eq!(p.pieces(&s), [(0, mb - 1), (mb - 1, mb + 1)]);
    }
    assert_eq!(o200k.pieces(&"\r\n".repeat(mb)), [(0, 2 * mb)]);
    assert_eq!(o200k.pieces(&"AB".repeat(mb)), [(0, 2 * mb)]);
}

#[test]
fn general_engine_matches_fancy_regex_on_other_patterns() {
    let patterns = [
        r"(?i)hello|world",
        r"a+?b|a*",
        r"(ab)+|[a-c]{2,3}?",
        r"\w+|\W",
        r"\b\w+\b|.",
        r"(?m)^\s*\S+$|\n",
        r"(?s).{1,4}",
        r"[^a-c\d]+|\d{2}+|.",
        r"(?x) a b | \d+ # comment",
        r"(?>a+)b|a",
        r"x*",
        r"(a|ab)(c|bcd)(d*)",
        r"[[:alpha:]]+|[[:^alpha:]]",
        r"\p{Lu}\p{Ll}*|\P{L}+",
        r"(?i)[k-s]+|\p{Lu}",
        r"(?i:\p{Lu})+|.",
        r"[\p{Greek}]",
        r"(?=\d)\w+|\S",
        r"(a|a)*b|.",
        r"(a|ab)*c|.",
        r"\x41\u00e9\x{1F600}|[\-\]]+",
        r"\s++\z|\s+\Z|\S+",
        r"\p{isLu}+|\p{gc=Ll}+|\p{General_Category=Nd}|.",
        r"\p{digit}|\p{punct}+|\p{Combining_Mark}|\pN|\PL",
        r"\p{White_Space}+|\p{Any}",
        r"[\P{L}\P{N}]+|[^\p{Zs}\p{Cc}]",
        r"\p{Lt}|\p{Lm}|\p{Lo}+|\p{Mc}|\p{Me}|\p{Nl}|\p{No}|\p{Sk}|\p{So}|\p{Cf}|\p{Co}|\p{Cn}|\p{Zl}|\p{Zp}|\p{Cs}",
        r"(?i)\p{Lu}|(?i:[^\p{Ll}])|(?-i:K)",
        r"[\d\w-]+|[\s.]|[^\W\d]",
        r"[a-]+|[^-a]",
        r"a{,2}b|a{2,}|a{,}s|a{}|b{ 2 }|{2}a|s{1,x}|.",
        r"(?P<word>\w+)|(?<s_1>\s)|(?<a b>b)|(?<a)s>a)|.",
        r"(?i-m:B)|(?-i)s|(?x-i: a b)",
        r"\x{41}B|\x{00000041}|\p{^Lu}+|\P{^Ll}|.",
        r"[\a\f\v\e\b]+|\t\n?|\r|\U0001F600|\a|.",
        r"\A\w|\B\w|\h+|\H|\bs",
        r"[]a]+|[^]s]|[a-as-s]+",
        r"[[:alnum:]]+|[[:punct:]]+|[[:space:]]+|[[:^ascii:]]+|[[:cntrl:][:blank:]]",
        r"[[:lower:]][[:upper:]]|[[:digit:]][[:xdigit:]]|[[:word:]]+|[[:graph:]]|[[:print:]]",
    ];
    let mut rng = Rng(99);
    for src in patterns {
        let fancy = match Fancy::new(src) {
            Ok(f) => f,
            Err(_) => {
                assert!(Pattern::compile(src).is_err(), "{src}");
                continue;
            }
        };
        let pattern = match Pattern::compile(src) {
            Ok(p) => p,
            Err(e) => {
                assert!(src.contains("Greek"), "{src}: {e}");
                continue;
            }
        };
        for _ in 0..1500 {
            let text = random_text(&mut rng, 16);
            check(&pattern, &fancy, &text, src);
        }
        for text in adversarial(200) {
            check(&pattern, &fancy, &text, src);
        }
        // Its own source: braces, brackets and escapes as text.
        check(&pattern, &fancy, src, src);
        check(
            &pattern,
            &fancy,
            "a{,2}b aab a{}b b{ 2 }b {2}a s{1,x} a{,}s AB A}B aÉé \x07\x0c\x0b\x1b\x08\t\n\r\u{1F600}\x07 ]a]s",
            src,
        );
    }
}

/// Loops whose body can match empty: short random texts only (these are
/// exponential for a backtracker).
#[test]
fn general_engine_empty_loops_match_fancy_regex() {
    let mut rng = Rng(5);
    for src in [r"(a*)*b|.", r"(a?)+?s|(|k)*", r"(?:\b|a)+x|.", r"(a|)*"] {
        let fancy = Fancy::new(src).unwrap();
        let pattern = Pattern::compile(src).unwrap();
        for _ in 0..3000 {
            let text = random_text(&mut rng, 10);
            check(&pattern, &fancy, &text, src);
        }
    }
}

/// The length of `src`'s program on the general engine.
fn program_len(src: &str) -> usize {
    match Pattern::compile_general(src).unwrap() {
        Pattern::General(re) => re.program_len(),
        _ => unreachable!(),
    }
}

#[test]
fn a_group_of_one_item_compiles_as_the_item() {
    // A quantified single class compiles to one run instruction, also
    // inside a group; an empty group adds nothing.
    assert_eq!(program_len("(?:a)+"), program_len("a+"));
    assert_eq!(program_len("(?:[ab])*c"), program_len("[ab]*c"));
    assert_eq!(program_len("(?:)a"), program_len("a"));
    assert!(program_len("(?:ab)+") > program_len("a+") + 1);
}

#[test]
fn nesting_is_allowed_to_its_limit_and_no_deeper() {
    let nest =
        |open: &str, close: &str, n: usize| format!("{}a{}", open.repeat(n), close.repeat(n));
    // `alternation` starts at depth 0 and each group goes one deeper.
    let limit = super::general::MAX_DEPTH;
    assert!(Pattern::compile_general(&nest("(", ")", limit)).is_ok());
    let e = Pattern::compile_general(&nest("(", ")", limit + 1)).unwrap_err();
    assert!(e.to_string().contains("nested too deeply"), "{e}");
    // Classes: the outermost at depth 0, each nested one deeper.
    assert!(Pattern::compile_general(&nest("[", "]", limit + 1)).is_ok());
    let e = Pattern::compile_general(&nest("[", "]", limit + 2)).unwrap_err();
    assert!(e.to_string().contains("classes nested too deeply"), "{e}");
}

#[test]
fn bad_patterns_are_invalid_argument_naming_the_problem() {
    for (src, problem) in [
        (r"(a", "unclosed group at byte 0"),
        (r"a)", "unmatched ')' at byte 1"),
        (r"[a", "unclosed class at byte 0"),
        (r"*a", "without an expression at byte 0"),
        (r"a**", "nested quantifier at byte 2"),
        (r"(?<=a)b", "lookbehind is not supported at byte 0"),
        (r"(a)\1", "backreferences are not supported at byte 3"),
        (r"\p{Greek}", "unsupported property 'Greek' at byte 0"),
        (r"[a&&b]", "set operations are not supported at byte 2"),
        (r"a{3,2}", "decreasing at byte 1"),
        (r"\q", "unsupported escape '\\q' at byte 0"),
        (r"\x{110000}", "invalid hexadecimal escape at byte 0"),
        (r"a\", "trailing backslash at byte 1"),
        (r"(?u)a", "unsupported group or flag 'u' at byte 2"),
        (r"(?--i)a", "unsupported group or flag '-' at byte 3"),
        (r"(?<>a)", "empty group name at byte 3"),
        (r"(?P<a", "unclosed group name at byte 4"),
        (r"\b{x}", "unsupported word boundary form"),
        (r"\x{000000041}", "invalid hexadecimal escape at byte 0"),
        (r"\x{+41}", "invalid hexadecimal escape at byte 0"),
        (r"\x{}", "invalid hexadecimal escape at byte 0"),
        (r"\p{alpha}", "unsupported property 'alpha' at byte 0"),
        (r"\p{word}", "unsupported property 'word' at byte 0"),
        (r"[z-a]", "decreasing at byte 2"),
        (r"a{1,100000}{1,100000}", "nested quantifier"),
        (r"(ab){100000}", "too large"),
    ] {
        match Pattern::compile(src) {
            Err(crate::Error::InvalidArgument(m)) => {
                assert!(m.starts_with("pattern"), "{src}: {m}");
                assert!(m.contains(problem), "{src}: {m} (expected {problem})");
            }
            other => panic!("{src}: {other:?}"),
        }
    }
}

#[test]
fn splitters_allocate_nothing_and_handle_empty_text() {
    for (_, _, p) in cases() {
        let mut n = 0;
        p.split("", |_, _| n += 1);
        assert_eq!(n, 0);
    }
}
