//! The portal's one style sheet, inline in every page (no external asset,
//! no web font): a narrow column on a phone (360 px up) that widens on a
//! desktop; tables scroll sideways inside their own box, never the page;
//! buttons keep a gap; times do not wrap; states are coloured badges.

pub const STYLE: &str = "
*{box-sizing:border-box}
body{font:15px/1.5 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;margin:0;color:#1b1f24;background:#f4f6f8}
header{display:flex;flex-wrap:wrap;gap:8px 20px;align-items:center;padding:10px 16px;background:#0f3d3e;color:#fff}
header .brand{font-size:16px;font-weight:700;margin:0;white-space:nowrap}
header nav{display:flex;flex-wrap:wrap;gap:4px 16px;flex:1}
header a{color:#d7f5ee;text-decoration:none}
header a[aria-current]{color:#fff;font-weight:600;text-decoration:underline;text-underline-offset:5px}
header form{margin:0}
header button{background:transparent;border-color:#8fc9c0;color:#fff;padding:3px 12px}
main{padding:16px;max-width:1320px;margin:0 auto}
h2{font-size:21px;margin:4px 0 14px;overflow-wrap:anywhere}
h3{font-size:16px;margin:0 0 10px}
h4{font-size:14px;margin:16px 0 8px}
a{color:#0b6b66}
p{margin:0 0 10px}
section{background:#fff;border:1px solid #d8dde3;border-radius:8px;padding:14px 16px;margin:0 0 16px;min-width:0}
.scroll{overflow-x:auto;background:#fff;border:1px solid #d8dde3;border-radius:8px;margin:0 0 16px}
section .scroll{border:0;border-radius:0;margin:0 -16px 8px;padding:0 0}
table{border-collapse:collapse;width:100%}
th,td{padding:8px 12px;text-align:left;vertical-align:top;border-bottom:1px solid #e8ebef}
th{background:#f0f3f6;font-weight:600;font-size:13px;color:#4b5563;white-space:nowrap}
tr:last-child>td,tr:last-child>th{border-bottom:0}
table.facts th{width:11em;background:transparent}
td.url,td.wide{overflow-wrap:anywhere;min-width:14em}
table.facts td,table.facts td code,table.facts td a{overflow-wrap:anywhere;white-space:normal}
code{font:13px ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;overflow-wrap:anywhere}
td code,td a,td.answer{white-space:nowrap}
td code{font-size:12px}
td small{display:block;color:#4b5563;font-size:12px}
pre{white-space:pre-wrap;overflow-wrap:anywhere;margin:0;font:12px/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
td pre{min-width:16em;max-width:46em}
pre.json{background:#f6f8fa;border:1px solid #e3e7eb;border-radius:6px;padding:10px;max-height:28em;overflow:auto}
time{white-space:nowrap}
time[title]{text-decoration:underline dotted #9ca3af;text-underline-offset:3px}
.badge{display:inline-block;padding:0 9px;border-radius:999px;font-size:12px;font-weight:600;line-height:21px;white-space:nowrap;border:1px solid transparent}
.badge.good{background:#dcfce7;color:#166534;border-color:#bbe5c8}
.badge.bad{background:#fee2e2;color:#991b1b;border-color:#f6c5c5}
.badge.warn{background:#fef3c7;color:#92400e;border-color:#f3dc9b}
.badge.busy{background:#e0ecff;color:#1e40af;border-color:#c4d7fb}
.badge.off{background:#eceef1;color:#374151;border-color:#d8dde3}
button{font:inherit;font-size:14px;line-height:20px;padding:6px 14px;border-radius:6px;border:1px solid #0b6b66;background:#0b6b66;color:#fff;cursor:pointer;white-space:nowrap}
button:hover{filter:brightness(1.1)}
button.secondary{background:#fff;color:#0b6b66}
button.danger{background:#fff;color:#b91c1c;border-color:#e3a3a3}
.actions{display:flex;flex-wrap:wrap;gap:10px;align-items:center;margin:0 0 12px}
.actions form{margin:0;display:flex;flex-wrap:wrap;gap:10px;align-items:center}
form.row{display:flex;flex-wrap:wrap;gap:10px 14px;align-items:flex-end;margin:0 0 14px}
form.row .field{margin:0;flex:1 1 12em;max-width:24em}
.field{margin:0 0 12px;max-width:40em}
label{display:block;font-weight:600;font-size:13px;margin:0 0 4px;color:#374151}
input,select,textarea{font:inherit;font-size:14px;padding:6px 9px;border:1px solid #c5ccd3;border-radius:6px;width:100%;max-width:100%;background:#fff}
textarea{font:13px ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
.pair{display:flex;flex-wrap:wrap;gap:8px;margin:0 0 8px}
.pair input{flex:1 1 12em;width:auto}
[aria-invalid=true]{border-color:#b91c1c;box-shadow:0 0 0 1px #b91c1c}
.error{color:#b91c1c}
p.error{background:#fef2f2;border:1px solid #fecaca;border-radius:6px;padding:8px 12px}
.flash{background:#ecfdf3;border:1px solid #9fd5ad;border-radius:8px;padding:10px 14px;margin:0 0 16px}
.flash p:last-child{margin:0}
.done{color:#166534;font-weight:600}
.note{color:#4b5563}
.secret{font:13px ui-monospace,monospace;background:#fff7d6;padding:8px;border:1px solid #e7c85b;border-radius:6px;word-break:break-all}
.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(100%,340px),1fr));gap:0 16px}
.pager{margin:0 0 16px}
details>summary{cursor:pointer;font-weight:600;color:#0b6b66;margin:12px 0 4px}
@media (max-width:640px){header{justify-content:space-between}header nav{order:3;flex-basis:100%}main{padding:12px}section{padding:12px}section .scroll{margin:0 -12px 8px}table.facts th{width:auto}th,td{padding:7px 9px}}
";
