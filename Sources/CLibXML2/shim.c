#include "CLibXML2.h"
#include <libxml/parser.h>
int rolo_xml_init(void) { xmlInitParser(); return 0; }
