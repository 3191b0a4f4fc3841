#ifndef ROLO_CLIBXML2_H
#define ROLO_CLIBXML2_H
/* Public header deliberately does not include libxml2 (its ICU headers clash with Foundation). */
int rolo_xml_init(void);
#endif
