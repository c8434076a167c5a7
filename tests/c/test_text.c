/* Text in: tokenizers, counting, truncation and items pushed from text,
 * with every bad argument. (Counts against tiktoken on large corpora are in
 * tests/text.rs; these are the C contract's.) */
#include "check.h"
#include <stdint.h>

static const char *SENTENCE = "Hello, world! This is libcupel counting tokens.";

static void test_count(void) {
  cupel_tokenizer *o = NULL, *c = NULL, *none = NULL;
  int64_t n = -1;
  const char *texts[4];
  size_t lens[4];
  int64_t counts[4] = {-1, -1, -1, -1};

  CHECK_OK(cupel_tokenizer_new("o200k_base", &o));
  CHECK_OK(cupel_tokenizer_new("cl100k_base", &c));
  CHECK_STATUS(cupel_tokenizer_new("gpt2", &none), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("\"o200k_base\" and \"cl100k_base\"");
  CHECK(none == NULL);
  CHECK_STATUS(cupel_tokenizer_new(NULL, &none), CUPEL_ERROR_NULL_POINTER);
  CHECK_MSG("name");
  CHECK_STATUS(cupel_tokenizer_new("o200k_base", NULL), CUPEL_ERROR_NULL_POINTER);

  CHECK_OK(cupel_tokenizer_count(o, "hello world", 11, &n));
  CHECK(n == 2);
  CHECK_OK(cupel_tokenizer_count(o, SENTENCE, strlen(SENTENCE), &n));
  CHECK(n == 12);
  CHECK_OK(cupel_tokenizer_count(o, "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e\xe3\x81\xae\xe3\x83\x86\xe3\x82\xad\xe3\x82\xb9\xe3\x83\x88", 24, &n));
  CHECK(n == 6); /* 日本語のテキスト */
  CHECK_OK(cupel_tokenizer_count(c, "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e\xe3\x81\xae\xe3\x83\x86\xe3\x82\xad\xe3\x82\xb9\xe3\x83\x88", 24, &n));
  CHECK(n == 8);
  CHECK_OK(cupel_tokenizer_count(o, "<|endoftext|>", 13, &n));
  CHECK(n == 7); /* special tokens are ordinary text */
  /* Not NUL-terminated: only `len` bytes count. */
  CHECK_OK(cupel_tokenizer_count(o, "hello worldXXXX", 11, &n));
  CHECK(n == 2);
  CHECK_OK(cupel_tokenizer_count(o, NULL, 0, &n));
  CHECK(n == 0);

  n = 77;
  CHECK_STATUS(cupel_tokenizer_count(o, NULL, 3, &n), CUPEL_ERROR_NULL_POINTER);
  CHECK_MSG("text");
  CHECK_STATUS(cupel_tokenizer_count(o, "abc\xff", 4, &n), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("text is not valid UTF-8 (invalid byte at offset 3)");
  CHECK_STATUS(cupel_tokenizer_count(o, "ab\xe6\x97", 4, &n), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("offset 2"); /* a character cut short */
  CHECK_STATUS(cupel_tokenizer_count(NULL, "a", 1, &n), CUPEL_ERROR_NULL_POINTER);
  CHECK_MSG("tokenizer");
  CHECK_STATUS(cupel_tokenizer_count(o, "a", 1, NULL), CUPEL_ERROR_NULL_POINTER);
  CHECK_MSG("out_tokens");
  CHECK(n == 77);

  /* count_many: all or nothing. */
  texts[0] = "hello world";
  lens[0] = 11;
  texts[1] = SENTENCE;
  lens[1] = strlen(SENTENCE);
  texts[2] = NULL;
  lens[2] = 0;
  texts[3] = "a";
  lens[3] = 1;
  CHECK_OK(cupel_tokenizer_count_many(o, 4, texts, lens, counts));
  CHECK(counts[0] == 2 && counts[1] == 12 && counts[2] == 0 && counts[3] == 1);
  texts[3] = "a\xc0";
  lens[3] = 2;
  counts[0] = -1;
  CHECK_STATUS(cupel_tokenizer_count_many(o, 4, texts, lens, counts), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("texts[3] is not valid UTF-8 (invalid byte at offset 1)");
  CHECK(counts[0] == -1);
  texts[3] = NULL;
  lens[3] = 1;
  CHECK_STATUS(cupel_tokenizer_count_many(o, 4, texts, lens, counts), CUPEL_ERROR_NULL_POINTER);
  CHECK_MSG("texts[3]");
  CHECK_OK(cupel_tokenizer_count_many(o, 0, NULL, NULL, NULL));
  CHECK_STATUS(cupel_tokenizer_count_many(o, 2, NULL, lens, counts), CUPEL_ERROR_NULL_POINTER);
  CHECK_MSG("texts");

  cupel_tokenizer_free(o);
  cupel_tokenizer_free(c);
  cupel_tokenizer_free(NULL);
}

static void test_truncate(void) {
  cupel_tokenizer *o = NULL;
  size_t head = 99, tail = 99, len = strlen(SENTENCE);
  int64_t n = -1;

  CHECK_OK(cupel_tokenizer_new("o200k_base", &o));
  /* Hello|,| world|!| This| is| lib|cup|el| counting| tokens|. */
  CHECK_OK(cupel_tokenizer_truncate(o, SENTENCE, len, 4, CUPEL_KEEP_HEAD, &head, &tail, &n));
  CHECK(head == 13 && tail == len && n == 4); /* "Hello, world!" */
  CHECK_OK(cupel_tokenizer_truncate(o, SENTENCE, len, 3, CUPEL_KEEP_TAIL, &head, &tail, &n));
  CHECK(head == 0 && tail == 30 && n == 3); /* " counting tokens." */
  CHECK_OK(cupel_tokenizer_truncate(o, SENTENCE, len, 5, CUPEL_KEEP_BOTH_ENDS, &head, &tail, &n));
  CHECK(head == 12 && tail == 39 && n == 5); /* "Hello, world" + " tokens." */
  CHECK_OK(cupel_tokenizer_truncate(o, SENTENCE, len, 12, CUPEL_KEEP_HEAD, &head, &tail, &n));
  CHECK(head == len && tail == len && n == 12); /* fits: all of it */
  CHECK_OK(cupel_tokenizer_truncate(o, SENTENCE, len, 0, CUPEL_KEEP_TAIL, &head, &tail, &n));
  CHECK(head == 0 && tail == len && n == 0);
  /* A cut never splits a character: 日本語 is 日本|語. */
  CHECK_OK(cupel_tokenizer_truncate(o, "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e", 9, 1, CUPEL_KEEP_HEAD, &head, &tail, &n));
  CHECK(head == 6 && n == 1);

  head = tail = 99;
  n = -1;
  CHECK_STATUS(cupel_tokenizer_truncate(o, SENTENCE, len, -1, CUPEL_KEEP_HEAD, &head, &tail, &n),
               CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("max_tokens is -1");
  CHECK_STATUS(cupel_tokenizer_truncate(o, SENTENCE, len, 3, 7, &head, &tail, &n), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("keep is 7");
  CHECK_STATUS(cupel_tokenizer_truncate(o, "\xff", 1, 3, CUPEL_KEEP_HEAD, &head, &tail, &n),
               CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("offset 0");
  CHECK_STATUS(cupel_tokenizer_truncate(o, SENTENCE, len, 3, CUPEL_KEEP_HEAD, NULL, &tail, &n),
               CUPEL_ERROR_NULL_POINTER);
  CHECK_MSG("out_head_end");
  CHECK(head == 99 && tail == 99 && n == -1);
  cupel_tokenizer_free(o);
}

/* A small vocabulary in tiktoken's format: the 256 bytes and a few merges. */
static char *tiny_vocab_without(const char *extra_lines, int skip) {
  static const char *b64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  size_t cap = 256 * 16 + strlen(extra_lines) + 1, at = 0;
  char *out = malloc(cap);
  int b;
  for (b = 0; b < 256; b++) {
    if (b == skip) continue;
    /* one byte: 2 base64 digits and "==" */
    at += (size_t)sprintf(out + at, "%c%c== %d\n", b64[b >> 2], b64[(b & 3) << 4], b);
  }
  strcpy(out + at, extra_lines);
  return out;
}

static char *tiny_vocab(const char *extra_lines) { return tiny_vocab_without(extra_lines, -1); }

static void test_from_tiktoken(void) {
  /* "YWI=" is "ab", "YWJj" is "abc" */
  char *vocab = tiny_vocab("YWI= 256\nYWJj 257\n");
  char *bad;
  cupel_tokenizer *t = NULL;
  int64_t n = -1;

  CHECK_OK(cupel_tokenizer_from_tiktoken((const uint8_t *)vocab, strlen(vocab), NULL, &t));
  CHECK_OK(cupel_tokenizer_count(t, "abc abd", 7, &n));
  CHECK(n == 4); /* pieces "abc" and " abd": abc | " ", ab, d */
  cupel_tokenizer_free(t);
  t = NULL;
  /* A pattern of its own (the general engine): one piece per character. */
  CHECK_OK(cupel_tokenizer_from_tiktoken((const uint8_t *)vocab, strlen(vocab), ".", &t));
  CHECK_OK(cupel_tokenizer_count(t, "abc", 3, &n));
  CHECK(n == 3);
  cupel_tokenizer_free(t);
  t = NULL;

  CHECK_STATUS(cupel_tokenizer_from_tiktoken((const uint8_t *)vocab, strlen(vocab), "(unclosed", &t),
               CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("pattern");
  CHECK(t == NULL);
  free(vocab);

  bad = tiny_vocab("YWI= 256\nnot base64 at all 257\n");
  CHECK_STATUS(cupel_tokenizer_from_tiktoken((const uint8_t *)bad, strlen(bad), NULL, &t), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("line 258");
  free(bad);
  bad = tiny_vocab("YWI= 256\nYWJj 256\n");
  CHECK_STATUS(cupel_tokenizer_from_tiktoken((const uint8_t *)bad, strlen(bad), NULL, &t), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("line 258: rank 256 is already the rank of line 257");
  free(bad);
  /* Without the byte 0x41. */
  bad = tiny_vocab_without("YWI= 256\n", 0x41);
  CHECK_STATUS(cupel_tokenizer_from_tiktoken((const uint8_t *)bad, strlen(bad), NULL, &t), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("single byte 0x41");
  free(bad);
  CHECK_STATUS(cupel_tokenizer_from_tiktoken(NULL, 5, NULL, &t), CUPEL_ERROR_NULL_POINTER);
  CHECK_MSG("ranks");
  CHECK_STATUS(cupel_tokenizer_from_tiktoken(NULL, 0, NULL, &t), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("no tokens");
  CHECK(t == NULL);
}

static void test_push_text(void) {
  cupel_tokenizer *o = NULL;
  cupel_items *items = NULL;
  const char *texts[3] = {"hello world", NULL, "a"};
  size_t lens[3] = {11, 0, 1};
  double scores[3] = {0.5, 0.25, 0.75};
  const char *kinds[3] = {"Document", NULL, "ToolOutput"};
  const char *s = NULL;
  size_t len = 0;
  int64_t t = 0;

  CHECK_OK(cupel_tokenizer_new("o200k_base", &o));
  CHECK_OK(cupel_items_new(&items));
  CHECK_OK(cupel_items_push_text(items, o, SENTENCE, strlen(SENTENCE), 0.9, "Message"));
  CHECK(cupel_items_len(items) == 1);
  CHECK_OK(cupel_items_tokens(items, 0, &t));
  CHECK(t == 12);
  CHECK_OK(cupel_items_content(items, 0, &s, &len));
  CHECK(len == strlen(SENTENCE) && memcmp(s, SENTENCE, len) == 0);

  /* Errors change nothing. */
  CHECK_STATUS(cupel_items_push_text(items, o, "", 0, 0.5, NULL), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("text is empty");
  CHECK_STATUS(cupel_items_push_text(items, o, "x\xff", 2, 0.5, NULL), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("offset 1");
  CHECK_STATUS(cupel_items_push_text(items, o, "x", 1, 0.0 / 0.0, NULL), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("score");
  CHECK_STATUS(cupel_items_push_text(items, o, "x", 1, 0.5, ""), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("kind");
  CHECK_STATUS(cupel_items_push_text(items, NULL, "x", 1, 0.5, NULL), CUPEL_ERROR_NULL_POINTER);
  CHECK_MSG("tokenizer");
  CHECK(cupel_items_len(items) == 1);

  /* The bulk form: all or nothing. */
  CHECK_STATUS(cupel_items_push_texts(items, o, 3, texts, lens, scores, kinds), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("texts[1] is empty");
  CHECK(cupel_items_len(items) == 1);
  texts[1] = "two words";
  lens[1] = 9;
  scores[2] = 1.0 / 0.0;
  CHECK_STATUS(cupel_items_push_texts(items, o, 3, texts, lens, scores, kinds), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("scores[2]");
  CHECK(cupel_items_len(items) == 1);
  scores[2] = 0.75;
  CHECK_OK(cupel_items_push_texts(items, o, 3, texts, lens, scores, kinds));
  CHECK(cupel_items_len(items) == 4);
  CHECK_OK(cupel_items_tokens(items, 1, &t));
  CHECK(t == 2);
  CHECK_OK(cupel_items_tokens(items, 2, &t));
  CHECK(t == 2);
  CHECK_OK(cupel_items_kind(items, 2, &s, &len));
  CHECK(len == 7 && memcmp(s, "Message", 7) == 0);
  CHECK_OK(cupel_items_kind(items, 3, &s, &len));
  CHECK(len == 10 && memcmp(s, "ToolOutput", 10) == 0);
  CHECK_OK(cupel_items_content(items, 3, &s, &len));
  CHECK(len == 1 && s[0] == 'a');
  CHECK_OK(cupel_items_push_texts(items, o, 0, NULL, NULL, NULL, NULL));
  /* The first bad element in index order is the one named. */
  texts[2] = "\xff";
  scores[1] = 0.0 / 0.0;
  CHECK_STATUS(cupel_items_push_texts(items, o, 3, texts, lens, scores, kinds), CUPEL_ERROR_INVALID_ARGUMENT);
  CHECK_MSG("scores[1]");
  CHECK(cupel_items_len(items) == 4);
  CHECK(cupel_items_len(items) == 4);

  cupel_items_free(items);
  cupel_tokenizer_free(o);
}

int main(void) {
  test_count();
  test_truncate();
  test_from_tiktoken();
  test_push_text();
  return check_summary("test_text");
}
