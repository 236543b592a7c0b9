/*
 * The label texts of a collector's places (collector name, then socket,
 * core, cpu, or socket, die, box: METRIC_LABEL_SEP-separated, a number
 * below 0 left empty), each made once and kept: the conflicts, resets and
 * multiplexing series of every unit ask for the same texts every sample.
 * A text depends on the numbers alone, so one made before a CPU went
 * offline is still right when it is back.
 */
#ifndef UNCORED_PLACE_LABELS_H
#define UNCORED_PLACE_LABELS_H

struct place_labels;

/*
 * The label text of name at place (the three numbers, -1: empty), from
 * *labels, made and kept there (allocating *labels) the first time it is
 * asked.  The text stays valid until the next call with *labels.  When
 * memory runs out, or it is longer than a kept text can be, it is written
 * to buf (len bytes) instead and buf is returned.
 */
const char *place_label(struct place_labels **labels, const char *name, const int place[3],
			char *buf, size_t len);

/* Free what place_label() kept; labels may be NULL. */
void place_labels_free(struct place_labels *labels);

#endif
