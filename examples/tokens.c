/* Counting tokens: a built-in vocabulary, an exact count, a cut to a token
 * budget keeping both ends, and an item pushed straight from its text.
 *
 *   cargo build --release
 *   cc -std=c99 -Iinclude examples/tokens.c -Ltarget/release -lcupel \
 *      -Wl,-rpath,"$PWD/target/release" -o target/tokens && ./target/tokens
 */
#include "cupel.h"
#include <stdio.h>
#include <string.h>

int main(void) {
  const char *log = "2026-11-23T08:00:03Z auth-7f9c4 WARN clock skew 401s against ntp.internal\n"
                    "2026-11-23T08:00:03Z auth-7f9c4 INFO POST /login 401 Unauthorized\n"
                    "2026-11-23T08:00:09Z auth-2b81d INFO POST /login 200 OK\n";
  cupel_tokenizer *tok = NULL;
  cupel_items *items = NULL;
  int64_t n = 0, kept = 0, item_tokens = 0;
  size_t head = 0, tail = 0, len = strlen(log);

  cupel_items_new(&items);
  cupel_tokenizer_new("o200k_base", &tok); /* or "cl100k_base" */
  if (!tok) { /* an unknown name lists the known ones */
    fprintf(stderr, "cupel: %s\n", cupel_last_error());
    return 1;
  }
  cupel_tokenizer_count(tok, log, len, &n);
  printf("the log: %zu bytes, %lld tokens\n", len, (long long)n);

  /* At most 20 tokens: the first 10 and the last 10 or fewer. */
  cupel_tokenizer_truncate(tok, log, len, 20, CUPEL_KEEP_BOTH_ENDS, &head, &tail, &kept);
  printf("cut to %lld tokens: \"%.*s\" ... \"%.*s\"", (long long)kept, (int)head, log, (int)(len - tail - 1),
         log + tail);
  printf("\n");

  /* An item from text: its tokens counted, its content set. */
  cupel_items_push_text(items, tok, log, len, 0.8, "ToolOutput");
  cupel_items_tokens(items, 0, &item_tokens);
  printf("item 0: %lld tokens\n", (long long)item_tokens);

  cupel_items_free(items);
  cupel_tokenizer_free(tok);
  return 0;
}
