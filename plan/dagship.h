/* dagship.h: HOP DAGs in remote parfor plans (dagship.c). */
#ifndef BRAID_DAGSHIP_H
#define BRAID_DAGSHIP_H

#include "../runtime/planship.h"

extern const RtDagShip plan_dagship;

#endif
