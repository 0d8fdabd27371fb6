/* A serving engine's start-up in C, through attnsel's C API: find the GPU (probe it, or take
 * --gpu / ATTNSEL_GPU), plan for the model, print the SGLang launch flags, or refuse to start
 * with attnsel's reasons.
 *
 *   server_startup_c [--gpu GPU] [--cuda X.Y] [--attention-backend B] [--kv-cache-dtype D]
 *                    [--page-size N] MODEL
 *
 * Exit codes, as attnsel's: 0 a valid plan, 1 no valid plan, 2 bad input, 3 no GPU found.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <attnsel/attnsel.h>

static int usage(const char* why) {
  fprintf(stderr,
          "server_startup_c: %s\nusage: server_startup_c [--gpu GPU] [--cuda X.Y] [--attention-backend B] "
          "[--kv-cache-dtype D] [--page-size N] MODEL\n",
          why);
  return 2;
}

/* A failed setter or select: attnsel's message, and exit code 2 (bad input). */
static int bad_input(attnsel_request* request, attnsel_status status) {
  fprintf(stderr, "server_startup_c: %s (%s)\n", attnsel_request_last_error(request), attnsel_status_string(status));
  return 2;
}

/* Plans with a request that has everything but the device; the exit code. */
static int plan(attnsel_request* request) {
  attnsel_result* result = NULL;
  attnsel_status status = attnsel_select(request, &result);
  int ok = 0;
  size_t i, count = 0;
  const char *rule, *message;
  if (status != ATTNSEL_OK) return bad_input(request, status);

  attnsel_result_diagnostic_count(result, ATTNSEL_DIAGNOSTIC_WARNING, &count);
  for (i = 0; i < count; ++i)
    if (attnsel_result_diagnostic(result, ATTNSEL_DIAGNOSTIC_WARNING, i, &rule, &message, NULL) == ATTNSEL_OK)
      fprintf(stderr, "warning: %s [%s]\n", message, rule);

  attnsel_result_ok(result, &ok);
  if (!ok) {
    fprintf(stderr, "server_startup_c: refusing to start; attnsel says this configuration cannot run:\n");
    attnsel_result_diagnostic_count(result, ATTNSEL_DIAGNOSTIC_ERROR, &count);
    for (i = 0; i < count; ++i)
      if (attnsel_result_diagnostic(result, ATTNSEL_DIAGNOSTIC_ERROR, i, &rule, &message, NULL) == ATTNSEL_OK)
        fprintf(stderr, "  %s [%s]\n", message, rule);
    attnsel_result_free(result);
    return 1;
  }

  printf("launch flags:");
  attnsel_result_flag_count(result, &count);
  for (i = 0; i < count; ++i) {
    const char* flag = NULL;
    if (attnsel_result_flag(result, i, &flag) == ATTNSEL_OK) printf(" %s", flag);
  }
  printf("\n");
  attnsel_result_free(result);
  return 0;
}

int main(int argc, char** argv) {
  const char* gpu = getenv("ATTNSEL_GPU");
  const char *cuda = NULL, *backend = NULL, *dtype = NULL, *model = NULL;
  int page_size = 0, i, code;
  attnsel_matrix* matrix = NULL;
  attnsel_request* request = NULL;
  attnsel_probe* probe = NULL;
  attnsel_status status;
  const char* version = "";

  if (gpu != NULL && *gpu == '\0') gpu = NULL;
  for (i = 1; i < argc; ++i) {
    const char* arg = argv[i];
    int is_option = strncmp(arg, "--", 2) == 0;
    if (is_option && i + 1 >= argc) return usage("an option needs a value");
    if (strcmp(arg, "--gpu") == 0) gpu = argv[++i];
    else if (strcmp(arg, "--cuda") == 0) cuda = argv[++i];
    else if (strcmp(arg, "--attention-backend") == 0) backend = argv[++i];
    else if (strcmp(arg, "--kv-cache-dtype") == 0) dtype = argv[++i];
    else if (strcmp(arg, "--page-size") == 0) {
      char* end = NULL;
      long size = strtol(argv[++i], &end, 10);
      if (*end != '\0' || size < 1 || size > 1048576) return usage("--page-size: expected 1 to 1048576");
      page_size = (int)size;
    }
    else if (model == NULL && !is_option) model = arg;
    else return usage("unexpected argument");
  }
  if (model == NULL) return usage("no model given (mha, mla, gdn, dsa, or a model id such as deepseek-ai/DeepSeek-V3)");

  /* Loaded once; immutable, so every thread of a server may share it. */
  status = attnsel_matrix_load_builtin(&matrix);
  if (status != ATTNSEL_OK) {
    fprintf(stderr, "server_startup_c: %s\n", attnsel_matrix_last_error(matrix));
    attnsel_matrix_free(matrix);
    return 2;
  }
  attnsel_matrix_version(matrix, &version);
  printf("attnsel %s, matrix %s\n", attnsel_version(), version);

  status = attnsel_request_new(matrix, &request);
  attnsel_matrix_free(matrix); /* the request keeps what it needs */
  if (status != ATTNSEL_OK) return usage(attnsel_status_string(status));

  /* The device: named, or probed. */
  if (gpu != NULL) {
    status = attnsel_request_set_gpu(request, gpu);
  } else {
    size_t devices = 0;
    status = attnsel_probe_run(0, &probe);
    if (status == ATTNSEL_OK) attnsel_probe_device_count(probe, &devices);
    if (devices == 0) {
      const char* text = "";
      attnsel_probe_text(probe, &text);
      fprintf(stderr, "%sserver_startup_c: no GPU found; name one with --gpu or ATTNSEL_GPU\n", text);
      attnsel_probe_free(probe);
      attnsel_request_free(request);
      return 3;
    }
    status = attnsel_request_set_probed_device(request, probe, 0);
    attnsel_probe_free(probe);
  }
  if (status == ATTNSEL_OK) status = attnsel_request_set_cuda(request, cuda);
  if (status == ATTNSEL_OK) status = attnsel_request_set_model(request, model);
  if (status == ATTNSEL_OK) status = attnsel_request_set_backend(request, "attention", ATTNSEL_PHASE_ALL, backend);
  if (status == ATTNSEL_OK) status = attnsel_request_set_kv_cache_dtype(request, dtype);
  if (status == ATTNSEL_OK) status = attnsel_request_set_page_size(request, page_size);
  code = status == ATTNSEL_OK ? plan(request) : bad_input(request, status);
  attnsel_request_free(request);
  return code;
}
