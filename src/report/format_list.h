/*
 * The output formats, one line each.  PP_FORMAT(name) names the
 * pp_format_type ppi_format_<name>, defined in src/report/format_<name>.c
 * (a new format: that one file and one line here).  This order is
 * pp_format_at's and that of the lists in messages.  No include guard: the
 * includer defines PP_FORMAT.
 */
PP_FORMAT(text)
PP_FORMAT(json)
PP_FORMAT(csv)
PP_FORMAT(rankfile)
PP_FORMAT(html)
PP_FORMAT(md)
