/* The timeline page's script (timeline_js.c), embedded by export_timeline.c. */
#ifndef SPROF_TIMELINE_INTERNAL_H
#define SPROF_TIMELINE_INTERNAL_H

extern const char sprof_timeline_js[];

#endif
