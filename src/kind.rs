//! ContextKind: an open set of strings compared with ASCII case folding.
//! Kinds are interned per item set: each distinct folded kind gets a small id.

use crate::error::{invalid, Result};
use std::collections::HashMap;

/// The default kind, used when a caller passes no kind.
pub const DEFAULT_KIND: &str = "Message";

/// Checks that `kind` is a valid ContextKind: non-empty and not only whitespace.
/// `what` names the argument in the error message.
pub fn validate(kind: &str, what: &dyn std::fmt::Display) -> Result<()> {
    if kind.trim().is_empty() {
        return invalid!(
            "{what} {kind:?} is empty or only whitespace; a kind needs a visible name"
        );
    }
    Ok(())
}

/// The comparison key of a kind: its ASCII case folding.
pub fn fold(kind: &str) -> String {
    kind.to_ascii_lowercase()
}

/// Interns kinds: maps each folded kind to a dense id and remembers the first
/// spelling seen.
#[derive(Debug, Clone, Default)]
pub struct KindTable {
    names: Vec<Box<str>>,
    ids: HashMap<Box<str>, u32>,
    /// Every exact spelling interned so far, so that repeated spellings are
    /// found without folding (no allocation per item).
    spellings: HashMap<Box<str>, u32>,
    /// The spelling and id of the last `intern` call: runs of one kind
    /// need no hashing at all.
    last: Option<(String, u32)>,
}

impl KindTable {
    /// The id of `kind` if it has been interned.
    pub fn lookup(&self, kind: &str) -> Option<u32> {
        if kind.bytes().any(|b| b.is_ascii_uppercase()) {
            self.ids.get(fold(kind).as_str()).copied()
        } else {
            self.ids.get(kind).copied()
        }
    }

    /// The id of `kind`, interning it if new. The caller validated `kind`.
    pub fn intern(&mut self, kind: &str) -> u32 {
        if let Some((last, id)) = &self.last {
            if last == kind {
                return *id;
            }
        }
        if let Some(&id) = self.spellings.get(kind) {
            self.remember(kind, id);
            return id;
        }
        let id = match self.lookup(kind) {
            Some(id) => id,
            None => {
                let id = self.names.len() as u32;
                self.names.push(kind.into());
                self.ids.insert(fold(kind).into_boxed_str(), id);
                id
            }
        };
        self.spellings.insert(kind.into(), id);
        self.remember(kind, id);
        id
    }

    /// Makes `kind` the last spelling, reusing the buffer (no allocation
    /// once it has grown to the longest spelling).
    fn remember(&mut self, kind: &str, id: u32) {
        let (buf, last_id) = self.last.get_or_insert_with(|| (String::new(), 0));
        buf.clear();
        buf.push_str(kind);
        *last_id = id;
    }

    /// Number of distinct kinds.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// The first spelling seen of kind `id`.
    pub fn name(&self, id: u32) -> &str {
        &self.names[id as usize]
    }

    /// Forgets every kind interned after the first `len`.
    pub fn truncate(&mut self, len: usize) {
        if len >= self.names.len() {
            return;
        }
        self.names.truncate(len);
        self.ids.retain(|_, id| (*id as usize) < len);
        self.spellings.retain(|_, id| (*id as usize) < len);
        if self
            .last
            .as_ref()
            .is_some_and(|(_, id)| *id as usize >= len)
        {
            self.last = None;
        }
    }

    pub fn clear(&mut self) {
        self.names.clear();
        self.ids.clear();
        self.spellings.clear();
        self.last = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clear_forgets_every_kind_and_spelling() {
        let mut t = KindTable::default();
        assert!(t.is_empty());
        t.intern("Tool");
        t.intern("Memory");
        assert!(!t.is_empty() && t.len() == 2);
        t.clear();
        assert!(t.is_empty());
        assert_eq!(t.len(), 0);
        assert_eq!(t.lookup("tool"), None);
        // Interned afresh: id 0 and the new first spelling.
        assert_eq!(t.intern("MEMORY"), 0);
        assert_eq!(t.name(0), "MEMORY");
        assert_eq!(t.intern("Tool"), 1);
    }

    #[test]
    fn intern_remembers_the_last_spelling() {
        let mut t = KindTable::default();
        assert_eq!(t.last, None);
        let tool = t.intern("Tool");
        assert_eq!(t.last, Some(("Tool".to_string(), tool)));
        let memory = t.intern("Memory");
        assert_eq!(t.last, Some(("Memory".to_string(), memory)));
        // A known spelling found in the spelling map becomes the last too.
        assert_eq!(t.intern("Tool"), tool);
        assert_eq!(t.last, Some(("Tool".to_string(), tool)));
        // Another spelling of a known kind: same id, remembered as spelled.
        assert_eq!(t.intern("TOOL"), tool);
        assert_eq!(t.last, Some(("TOOL".to_string(), tool)));
    }

    #[test]
    fn folding_merges_spellings_and_keeps_the_first() {
        let mut t = KindTable::default();
        let a = t.intern("Message");
        let b = t.intern("MESSAGE");
        let c = t.intern("message");
        let d = t.intern("Memory");
        assert_eq!((a, b, c), (0, 0, 0));
        assert_eq!(d, 1);
        assert_eq!(t.name(0), "Message");
        assert_eq!(t.lookup("mEsSaGe"), Some(0));
        assert_eq!(t.lookup("Document"), None);
    }

    #[test]
    fn folding_is_ascii_only() {
        // Non-ASCII letters are not folded: "É" and "é" stay distinct kinds.
        let mut t = KindTable::default();
        assert_ne!(t.intern("É"), t.intern("é"));
    }

    #[test]
    fn empty_and_whitespace_kinds_are_invalid() {
        assert!(validate("", &"kind").is_err());
        assert!(validate(" \t\n", &"kind").is_err());
        assert!(validate(" x ", &"kind").is_ok());
    }
}
