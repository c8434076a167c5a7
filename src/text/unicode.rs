//! The Unicode character classes of pre-tokenization patterns, exactly as
//! the `regex` crate (the engine fancy-regex, and so tiktoken, runs)
//! defines them: the general category of every code point (`\p{L}`,
//! `\p{Lu}`, `\p{M}`, `\p{N}`, ...), Unicode `White_Space` (`\s`), the
//! word characters of `\w`, and the simple case folding orbits that
//! `(?i)` matches.
//!
//! One byte of properties per code point ([`Props`]): ASCII from a
//! 128-entry array, everything else from a three-level table
//! (`unicode_tables.rs`, generated from fancy-regex's own answers by this
//! module's tests: `CUPEL_REGEN_UNICODE=1 cargo test --release --lib
//! text::unicode` rewrites it).

use super::unicode_tables as t;

/// A Unicode general category (the two-letter value of the
/// `General_Category` property). Unassigned code points are [`Cn`](Self::Cn).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
#[repr(u8)]
pub enum Category {
    /// Uppercase Letter.
    Lu = 0,
    /// Lowercase Letter.
    Ll,
    /// Titlecase Letter.
    Lt,
    /// Modifier Letter.
    Lm,
    /// Other Letter.
    Lo,
    /// Nonspacing Mark.
    Mn,
    /// Spacing Mark.
    Mc,
    /// Enclosing Mark.
    Me,
    /// Decimal Number.
    Nd,
    /// Letter Number.
    Nl,
    /// Other Number.
    No,
    /// Connector Punctuation.
    Pc,
    /// Dash Punctuation.
    Pd,
    /// Open Punctuation.
    Ps,
    /// Close Punctuation.
    Pe,
    /// Initial Punctuation.
    Pi,
    /// Final Punctuation.
    Pf,
    /// Other Punctuation.
    Po,
    /// Math Symbol.
    Sm,
    /// Currency Symbol.
    Sc,
    /// Modifier Symbol.
    Sk,
    /// Other Symbol.
    So,
    /// Space Separator.
    Zs,
    /// Line Separator.
    Zl,
    /// Paragraph Separator.
    Zp,
    /// Control.
    Cc,
    /// Format.
    Cf,
    /// Surrogate.
    Cs,
    /// Private Use.
    Co,
    /// Unassigned.
    Cn,
}

impl Category {
    /// Every category, in the order of their discriminants.
    pub const ALL: [Category; 30] = {
        use Category::*;
        [
            Lu, Ll, Lt, Lm, Lo, Mn, Mc, Me, Nd, Nl, No, Pc, Pd, Ps, Pe, Pi, Pf, Po, Sm, Sc, Sk, So,
            Zs, Zl, Zp, Cc, Cf, Cs, Co, Cn,
        ]
    };

    /// The category's two-letter abbreviation (`"Lu"`).
    pub fn abbreviation(self) -> &'static str {
        CATEGORY_NAMES[self as usize].0
    }

    /// The category's long name (`"Uppercase_Letter"`).
    pub fn long_name(self) -> &'static str {
        CATEGORY_NAMES[self as usize].1
    }

    /// This category as a one-bit [`CategorySet`].
    pub const fn set(self) -> CategorySet {
        CategorySet(1 << self as u32)
    }
}

/// The abbreviation and long name of each category, by discriminant.
const CATEGORY_NAMES: [(&str, &str); 30] = [
    ("Lu", "Uppercase_Letter"),
    ("Ll", "Lowercase_Letter"),
    ("Lt", "Titlecase_Letter"),
    ("Lm", "Modifier_Letter"),
    ("Lo", "Other_Letter"),
    ("Mn", "Nonspacing_Mark"),
    ("Mc", "Spacing_Mark"),
    ("Me", "Enclosing_Mark"),
    ("Nd", "Decimal_Number"),
    ("Nl", "Letter_Number"),
    ("No", "Other_Number"),
    ("Pc", "Connector_Punctuation"),
    ("Pd", "Dash_Punctuation"),
    ("Ps", "Open_Punctuation"),
    ("Pe", "Close_Punctuation"),
    ("Pi", "Initial_Punctuation"),
    ("Pf", "Final_Punctuation"),
    ("Po", "Other_Punctuation"),
    ("Sm", "Math_Symbol"),
    ("Sc", "Currency_Symbol"),
    ("Sk", "Modifier_Symbol"),
    ("So", "Other_Symbol"),
    ("Zs", "Space_Separator"),
    ("Zl", "Line_Separator"),
    ("Zp", "Paragraph_Separator"),
    ("Cc", "Control"),
    ("Cf", "Format"),
    ("Cs", "Surrogate"),
    ("Co", "Private_Use"),
    ("Cn", "Unassigned"),
];

/// A set of general categories, one bit per [`Category`] discriminant.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash, Default)]
pub struct CategorySet(pub u32);

impl CategorySet {
    /// `\p{L}`: Lu, Ll, Lt, Lm, Lo.
    pub const LETTER: CategorySet = CategorySet(0b11111);
    /// `\p{LC}`: Lu, Ll, Lt.
    pub const CASED_LETTER: CategorySet = CategorySet(0b111);
    /// `\p{M}`: Mn, Mc, Me.
    pub const MARK: CategorySet = CategorySet(0b111 << 5);
    /// `\p{N}`: Nd, Nl, No.
    pub const NUMBER: CategorySet = CategorySet(0b111 << 8);
    /// `\p{P}`: Pc, Pd, Ps, Pe, Pi, Pf, Po.
    pub const PUNCTUATION: CategorySet = CategorySet(0b111_1111 << 11);
    /// `\p{S}`: Sm, Sc, Sk, So.
    pub const SYMBOL: CategorySet = CategorySet(0b1111 << 18);
    /// `\p{Z}`: Zs, Zl, Zp.
    pub const SEPARATOR: CategorySet = CategorySet(0b111 << 22);
    /// `\p{C}`: Cc, Cf, Cs, Co, Cn.
    pub const OTHER: CategorySet = CategorySet(0b11111 << 25);

    /// Whether `category` is in the set.
    #[inline]
    pub const fn contains(self, category: Category) -> bool {
        self.0 >> category as u32 & 1 != 0
    }

    /// The union of two sets.
    pub const fn union(self, other: CategorySet) -> CategorySet {
        CategorySet(self.0 | other.0)
    }
}

/// The properties of one code point in one byte: the general category in
/// the low five bits, then [`WHITE_SPACE`](Self::WHITE_SPACE),
/// [`WORD`](Self::WORD) and [`CASED`](Self::CASED).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub struct Props(pub u8);

impl Props {
    /// Unicode `White_Space` (what `\s` matches).
    pub const WHITE_SPACE: u8 = 1 << 5;
    /// A word character (what `\w` matches: Alphabetic, M, Nd, Pc,
    /// Join_Control).
    pub const WORD: u8 = 1 << 6;
    /// The code point has other members in its simple case folding orbit
    /// (`(?i)` makes it match more than itself).
    pub const CASED: u8 = 1 << 7;

    /// The general category.
    #[inline]
    pub fn category(self) -> Category {
        Category::ALL[(self.0 & 31) as usize]
    }

    /// Whether the category is in `set`.
    #[inline]
    pub fn is_in(self, set: CategorySet) -> bool {
        set.0 >> (self.0 & 31) & 1 != 0
    }

    /// `\s`.
    #[inline]
    pub fn is_white_space(self) -> bool {
        self.0 & Self::WHITE_SPACE != 0
    }

    /// `\w`.
    #[inline]
    pub fn is_word(self) -> bool {
        self.0 & Self::WORD != 0
    }

    /// Whether `(?i)` makes the code point match others.
    #[inline]
    pub fn is_cased(self) -> bool {
        self.0 & Self::CASED != 0
    }
}

/// The properties of the ASCII characters, by code (a constant, for tables
/// built at compile time).
pub const ASCII_PROPS: [u8; 128] = t::ASCII;

/// The properties of code point `cp` (any `u32`; past U+10FFFF and the
/// surrogates, as unassigned).
#[inline]
pub fn props_of(cp: u32) -> Props {
    if cp < 0x80 {
        return Props(t::ASCII[cp as usize]);
    }
    if cp >= 0x11_0000 {
        return Props(Category::Cn as u8);
    }
    let mid = t::TOP[(cp >> t::TOP_SHIFT) as usize] as usize;
    let leaf =
        t::MID[(mid << t::MID_BITS) + ((cp >> t::LEAF_BITS) as usize & t::MID_MASK)] as usize;
    Props(t::LEAVES[(leaf << t::LEAF_BITS) + (cp as usize & t::LEAF_MASK)])
}

/// The properties of `c`.
#[inline]
pub fn props(c: char) -> Props {
    props_of(c as u32)
}

/// The general category of `c`.
#[inline]
pub fn category(c: char) -> Category {
    props(c).category()
}

/// `\s`: Unicode `White_Space`.
#[inline]
pub fn is_white_space(c: char) -> bool {
    props(c).is_white_space()
}

/// `\w`: a word character.
#[inline]
pub fn is_word(c: char) -> bool {
    props(c).is_word()
}

/// `\d`: a decimal digit (`Nd`).
#[inline]
pub fn is_digit(c: char) -> bool {
    props(c).category() == Category::Nd
}

/// Calls `f` with each other member of `c`'s simple case folding orbit
/// (the characters that `(?i)c` also matches), if any.
pub fn for_each_case_mate(c: char, mut f: impl FnMut(char)) {
    if !props(c).is_cased() {
        return;
    }
    let mut cur = c as u32;
    loop {
        let next = match t::CASE_ORBITS.binary_search_by_key(&cur, |&(k, _)| k) {
            Ok(i) => t::CASE_ORBITS[i].1,
            Err(_) => return,
        };
        if next == c as u32 {
            return;
        }
        if let Some(ch) = char::from_u32(next) {
            f(ch);
        }
        cur = next;
    }
}

/// Every code point that has other members in its case folding orbit, with
/// the next member of the orbit (a cycle), sorted by code point.
pub fn case_orbits() -> &'static [(u32, u32)] {
    t::CASE_ORBITS
}

/// The general category named `name` (an abbreviation such as `Lu` or `L`,
/// or a long name such as `Uppercase_Letter` or `Letter`, compared as the
/// `regex` crate does: ignoring case, spaces, `_` and `-`), as a set.
pub fn category_set_named(name: &str) -> Option<CategorySet> {
    let mut key: String = name
        .chars()
        .filter(|c| !matches!(c, ' ' | '_' | '-'))
        .map(|c| c.to_ascii_lowercase())
        .collect();
    if let Some(rest) = key.strip_prefix("is") {
        // ("is" alone becomes "", which names nothing, as "is" does.)
        key = rest.to_owned();
    }
    let groups: [(&str, &str, CategorySet); 8] = [
        ("l", "letter", CategorySet::LETTER),
        ("lc", "casedletter", CategorySet::CASED_LETTER),
        ("m", "mark", CategorySet::MARK),
        ("n", "number", CategorySet::NUMBER),
        ("p", "punctuation", CategorySet::PUNCTUATION),
        ("s", "symbol", CategorySet::SYMBOL),
        ("z", "separator", CategorySet::SEPARATOR),
        ("c", "other", CategorySet::OTHER),
    ];
    for (short, long, set) in groups {
        if key == short || key == long {
            return Some(set);
        }
    }
    let aliases: [(&str, CategorySet); 3] = [
        ("combiningmark", CategorySet::MARK),
        ("punct", CategorySet::PUNCTUATION),
        ("digit", Category::Nd.set()),
    ];
    for (alias, set) in aliases {
        if key == alias {
            return Some(set);
        }
    }
    for cat in Category::ALL {
        let (short, long) = CATEGORY_NAMES[cat as usize];
        if key == short.to_ascii_lowercase() || key == long.replace('_', "").to_ascii_lowercase() {
            return Some(cat.set());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use fancy_regex::Regex;
    use std::fmt::Write as _;

    #[test]
    fn the_small_predicates_and_sets() {
        assert!(is_word('a') && is_word('_') && is_word('7') && is_word('é'));
        assert!(!is_word(' ') && !is_word('-') && !is_word('!'));
        assert!(is_digit('7') && is_digit('\u{663}'));
        assert!(!is_digit('a') && !is_digit('½') && !is_digit('Ⅻ'));
        assert!(props('a').is_cased() && props('K').is_cased() && props('ſ').is_cased());
        assert!(!props('1').is_cased() && !props(' ').is_cased() && !props('中').is_cased());
        let orbits = case_orbits();
        assert!(orbits.len() > 100, "{} case orbits", orbits.len());
        assert!(
            orbits.contains(&('K' as u32, 'k' as u32))
                || orbits
                    .iter()
                    .any(|&(a, b)| a == 'K' as u32 || b == 'K' as u32)
        );
        // A union of overlapping sets is the larger set, not their difference.
        assert_eq!(
            CategorySet::LETTER.union(CategorySet::CASED_LETTER),
            CategorySet::LETTER
        );
        assert_eq!(
            CategorySet::LETTER
                .union(CategorySet::MARK)
                .union(CategorySet::LETTER),
            CategorySet::LETTER.union(CategorySet::MARK)
        );
        // Past the last code point: unassigned.
        assert_eq!(props_of(0x110000).category(), Category::Cn);
        assert_eq!(props_of(u32::MAX).category(), Category::Cn);
        assert_eq!(category_set_named("isLu"), category_set_named("Lu"));
        assert_eq!(category_set_named("is"), None);
    }

    fn all_chars() -> impl Iterator<Item = char> {
        (0..=0x10FFFFu32).filter_map(char::from_u32)
    }

    /// The oracle's categories, white space and word classes.
    struct Oracle {
        categories: Vec<Regex>,
        white_space: Regex,
        word: Regex,
    }

    impl Oracle {
        fn new() -> Self {
            let categories = Category::ALL
                .iter()
                .map(|c| Regex::new(&format!(r"\A\p{{{}}}\z", c.abbreviation())).unwrap())
                .collect();
            Oracle {
                categories,
                white_space: Regex::new(r"\A\s\z").unwrap(),
                word: Regex::new(r"\A\w\z").unwrap(),
            }
        }

        /// The properties byte, without CASED.
        fn props(&self, c: char, buf: &mut [u8; 4]) -> u8 {
            let s = c.encode_utf8(buf);
            let mut found = None;
            for (i, re) in self.categories.iter().enumerate() {
                if re.is_match(s).unwrap() {
                    assert!(found.is_none(), "{c:?} is in two categories");
                    found = Some(i as u8);
                }
            }
            let mut p = found.unwrap_or_else(|| panic!("{c:?} has no category"));
            if self.white_space.is_match(s).unwrap() {
                p |= Props::WHITE_SPACE;
            }
            if self.word.is_match(s).unwrap() {
                p |= Props::WORD;
            }
            p
        }
    }

    /// The case folding orbits: candidates from the standard library's case
    /// mappings, each checked (and completed) against the oracle.
    fn oracle_orbits() -> Vec<Vec<char>> {
        // Union-find over the standard library's single-character mappings.
        let mut parent: std::collections::HashMap<u32, u32> = Default::default();
        fn find(p: &mut std::collections::HashMap<u32, u32>, x: u32) -> u32 {
            let mut r = x;
            while let Some(&q) = p.get(&r) {
                if q == r {
                    break;
                }
                r = q;
            }
            p.insert(x, r);
            r
        }
        for c in all_chars() {
            let mut mates = vec![];
            let mut l = c.to_lowercase();
            if l.len() == 1 {
                mates.push(l.next().unwrap());
            }
            let mut u = c.to_uppercase();
            if u.len() == 1 {
                mates.push(u.next().unwrap());
            }
            for m in mates {
                if m != c {
                    parent.entry(c as u32).or_insert(c as u32);
                    parent.entry(m as u32).or_insert(m as u32);
                    let (a, b) = (find(&mut parent, c as u32), find(&mut parent, m as u32));
                    if a != b {
                        parent.insert(a, b);
                    }
                }
            }
        }
        let mut candidates: Vec<char> = parent.keys().filter_map(|&k| char::from_u32(k)).collect();
        candidates.sort();
        // The oracle's orbit of each candidate, among the candidates.
        let mut strings = vec![];
        for &c in &candidates {
            strings.push(c.to_string());
        }
        let mut orbit_of: std::collections::BTreeMap<char, Vec<char>> = Default::default();
        for &c in &candidates {
            let re = Regex::new(&format!(r"(?i)\A\x{{{:x}}}\z", c as u32)).unwrap();
            let orbit: Vec<char> = candidates
                .iter()
                .zip(&strings)
                .filter(|(_, s)| re.is_match(s).unwrap())
                .map(|(&d, _)| d)
                .collect();
            assert!(orbit.contains(&c));
            orbit_of.insert(c, orbit);
        }
        // Completeness: no code point outside the candidates matches one.
        let mut class = String::from(r"(?i)\A[");
        for &c in &candidates {
            write!(class, r"\x{{{:x}}}", c as u32).unwrap();
        }
        class.push_str(r"]\z");
        let any = Regex::new(&class).unwrap();
        let mut buf = [0; 4];
        for c in all_chars() {
            let inside = candidates.binary_search(&c).is_ok();
            assert_eq!(
                any.is_match(c.encode_utf8(&mut buf)).unwrap(),
                inside,
                "{c:?}"
            );
        }
        let mut orbits: Vec<Vec<char>> = vec![];
        for (c, orbit) in &orbit_of {
            if orbit.len() > 1 && orbit[0] == *c {
                // Symmetric: every member has the same orbit.
                for d in orbit {
                    assert_eq!(&orbit_of[d], orbit, "orbit of {d:?}");
                }
                orbits.push(orbit.clone());
            }
        }
        orbits
    }

    fn render(props: &[u8], orbits: &[Vec<char>]) -> String {
        // Three levels: TOP by cp >> (MID_BITS + LEAF_BITS), MID, LEAVES.
        const LEAF_BITS: usize = 6;
        const MID_BITS: usize = 6;
        let leaf_len = 1 << LEAF_BITS;
        let mut leaves: Vec<&[u8]> = vec![];
        let mut leaf_index: std::collections::HashMap<&[u8], usize> = Default::default();
        let mut mids_flat: Vec<u16> = vec![];
        for chunk in props.chunks(leaf_len) {
            let n = leaves.len();
            let i = *leaf_index.entry(chunk).or_insert(n);
            if i == n {
                leaves.push(chunk);
            }
            mids_flat.push(i as u16);
        }
        let mut mids: Vec<&[u16]> = vec![];
        let mut mid_index: std::collections::HashMap<&[u16], usize> = Default::default();
        let mut top: Vec<u8> = vec![];
        for chunk in mids_flat.chunks(1 << MID_BITS) {
            let n = mids.len();
            let i = *mid_index.entry(chunk).or_insert(n);
            if i == n {
                mids.push(chunk);
            }
            top.push(u8::try_from(i).unwrap());
        }
        let mut pairs: Vec<(u32, u32)> = vec![];
        for orbit in orbits {
            for (k, c) in orbit.iter().enumerate() {
                pairs.push((*c as u32, orbit[(k + 1) % orbit.len()] as u32));
            }
        }
        pairs.sort();
        let mut s = String::new();
        s.push_str(
            "// @generated by src/text/unicode.rs's tests (CUPEL_REGEN_UNICODE=1 cargo test\n\
             // --release --lib text::unicode) from fancy-regex's own answers. Do not edit.\n\
             //! The tables of `unicode.rs`: one properties byte per code point and the\n\
             //! simple case folding orbits.\n\n",
        );
        writeln!(s, "pub(super) const LEAF_BITS: u32 = {LEAF_BITS};").unwrap();
        writeln!(s, "pub(super) const LEAF_MASK: usize = {};", leaf_len - 1).unwrap();
        writeln!(s, "pub(super) const MID_BITS: u32 = {MID_BITS};").unwrap();
        writeln!(
            s,
            "pub(super) const MID_MASK: usize = {};",
            (1 << MID_BITS) - 1
        )
        .unwrap();
        writeln!(
            s,
            "pub(super) const TOP_SHIFT: u32 = {};",
            LEAF_BITS + MID_BITS
        )
        .unwrap();
        let bytes = |s: &mut String, name: &str, v: &[u8]| {
            // ASCII is a constant: the splitters build their tables from it.
            let kind = if name == "ASCII" { "const" } else { "static" };
            writeln!(
                s,
                "#[rustfmt::skip]\npub(super) {kind} {name}: [u8; {}] = [",
                v.len()
            )
            .unwrap();
            for line in v.chunks(16) {
                let items: Vec<String> = line.iter().map(|b| b.to_string()).collect();
                writeln!(s, "    {},", items.join(", ")).unwrap();
            }
            s.push_str("];\n");
        };
        bytes(&mut s, "ASCII", &props[..128]);
        bytes(&mut s, "TOP", &top);
        let mid_flat: Vec<u16> = mids.concat();
        writeln!(
            s,
            "#[rustfmt::skip]\npub(super) static MID: [u16; {}] = [",
            mid_flat.len()
        )
        .unwrap();
        for line in mid_flat.chunks(16) {
            let items: Vec<String> = line.iter().map(|b| b.to_string()).collect();
            writeln!(s, "    {},", items.join(", ")).unwrap();
        }
        s.push_str("];\n");
        bytes(&mut s, "LEAVES", &leaves.concat());
        writeln!(
            s,
            "#[rustfmt::skip]\npub(super) static CASE_ORBITS: &[(u32, u32)] = &["
        )
        .unwrap();
        for line in pairs.chunks(6) {
            let items: Vec<String> = line
                .iter()
                .map(|(a, b)| format!("(0x{a:X}, 0x{b:X})"))
                .collect();
            writeln!(s, "    {},", items.join(", ")).unwrap();
        }
        s.push_str("];\n");
        s
    }

    /// Every code point's properties and case orbit against fancy-regex's;
    /// with CUPEL_REGEN_UNICODE set, first rewrites the tables from it.
    #[test]
    fn every_code_point_matches_fancy_regex() {
        let oracle = Oracle::new();
        let orbits = oracle_orbits();
        let mut cased = std::collections::HashSet::new();
        for orbit in &orbits {
            cased.extend(orbit.iter().copied());
        }
        let mut buf = [0; 4];
        let mut expected = vec![0u8; 0x110000];
        for cp in 0..0x110000u32 {
            expected[cp as usize] = match char::from_u32(cp) {
                Some(c) => {
                    let mut p = oracle.props(c, &mut buf);
                    if cased.contains(&c) {
                        p |= Props::CASED;
                    }
                    p
                }
                None => Category::Cs as u8,
            };
        }
        if std::env::var_os("CUPEL_REGEN_UNICODE").is_some() {
            let path = concat!(env!("CARGO_MANIFEST_DIR"), "/src/text/unicode_tables.rs");
            std::fs::write(path, render(&expected, &orbits)).unwrap();
            eprintln!("rewrote {path}; rebuild and run again to check it");
            return;
        }
        for cp in 0..0x110000u32 {
            assert_eq!(props_of(cp).0, expected[cp as usize], "U+{cp:04X}");
        }
        for orbit in &orbits {
            for &c in orbit {
                let mut mates = vec![c];
                for_each_case_mate(c, |d| mates.push(d));
                mates.sort();
                assert_eq!(&mates, orbit, "orbit of {c:?}");
            }
        }
        assert_eq!(props_of(0x110000).category(), Category::Cn);
    }

    #[test]
    fn category_names() {
        assert_eq!(category_set_named("L"), Some(CategorySet::LETTER));
        assert_eq!(
            category_set_named("Uppercase Letter"),
            Some(Category::Lu.set())
        );
        assert_eq!(category_set_named("lu"), Some(Category::Lu.set()));
        assert_eq!(category_set_named("Nd"), Some(Category::Nd.set()));
        assert_eq!(category_set_named("Han"), None);
        for c in Category::ALL {
            assert_eq!(category_set_named(c.long_name()), Some(c.set()));
            assert_eq!(category_set_named(c.abbreviation()), Some(c.set()));
        }
    }

    #[test]
    fn ascii() {
        assert!(is_white_space(' ') && is_white_space('\n') && !is_white_space('a'));
        assert_eq!(category('a'), Category::Ll);
        assert_eq!(category('A'), Category::Lu);
        assert_eq!(category('7'), Category::Nd);
        assert!(is_word('_') && is_digit('٣') && is_white_space('\u{2028}'));
        let mut m = vec![];
        for_each_case_mate('k', |c| m.push(c));
        m.sort();
        assert_eq!(m, ['K', '\u{212A}']);
    }
}
