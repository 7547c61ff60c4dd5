#!/usr/bin/env python3
"""Writes the seed inputs of the importer fuzz targets (tools/fuzz/seeds/import/) from the test fixtures.

Each seed is small, so the fuzzer starts from inputs it can run fast, yet whole: a CSV file cut to its header
and first data lines (cut at a line end), a JSON file with every array cut to its first two elements (still
valid JSON, with every key the importer looks for). Run it again when a fixture or a format is added:
    python3 tools/fuzz/seeds/generate.py
The hand-written samples below follow the tests' own samples (MonitorImportTests, ClimateImportTests).
"""
import glob
import gzip
import json
import os

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..")
fixtures = os.path.join(root, "Tests/BreezeImportTests/Fixtures")
out = os.path.join(root, "tools/fuzz/seeds/import")
LIMIT = 1024   # the import targets' -max_len in tools/fuzz.sh


def head(data, limit=LIMIT, lines=5):
    """The first `lines` lines of a CSV, fewer if they exceed `limit` bytes (never fewer than header + 1 row)."""
    parts = data.split(b"\n")
    for n in range(lines, 1, -1):
        text = b"\n".join(parts[:n]) + b"\n"
        if len(text) <= limit:
            return text
    return (b"\n".join(parts[:2]) + b"\n")[:limit]


def shrink(value, n=2):
    if isinstance(value, list):
        return [shrink(v, n) for v in value[:n]]
    if isinstance(value, dict):
        return {k: shrink(v, n) for k, v in value.items()}
    return value


def write(name, data):
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)


os.makedirs(out, exist_ok=True)
for old in glob.glob(os.path.join(out, "*")):
    os.remove(old)
seen_headers = set()
for path in sorted(glob.glob(os.path.join(fixtures, "**/*.csv"), recursive=True)):
    data = open(path, "rb").read()
    header = data.split(b"\n", 1)[0]
    if header in seen_headers:   # the PurpleAir batch files share one header: one of them is enough
        continue
    seen_headers.add(header)
    write(os.path.basename(path), head(data))
for path in sorted(glob.glob(os.path.join(fixtures, "**/*.json"), recursive=True)):
    doc = json.load(open(path, encoding="utf-8"))
    write(os.path.basename(path), json.dumps(shrink(doc), ensure_ascii=False, separators=(",", ":")).encode())
cgm = head(gzip.open(os.path.join(fixtures, "biomarker/bokeh_sampledata_CGM.csv.gz")).read())
write("bokeh_sampledata_CGM.csv", cgm)
write("bokeh_sampledata_CGM.csv.gz", gzip.compress(cgm, mtime=0))

samples = {
    "airnow-tech-units.csv": """Agency,Site,Site AQS,Param,Param AQS,POC,Method,Duration,Date (UTC),Time (UTC),Date (LST),Time (LST),Offset (LST),Value,Unit,QC Code
OAQ,Test,60371103,CO,42101,1,554,1 Hr,8/1/2019,5:00,8/1/2019,0:00,-05:00,0.2,PPM,0
OAQ,Test,60371103,O3,44201,1,199,1 Hr,8/1/2019,5:00,8/1/2019,0:00,-05:00,0.035,PPM,0
OAQ,Test,60371103,TEMP,62101,1,40,1 Hr,8/1/2019,5:00,8/1/2019,0:00,-05:00,86,F,9
OAQ,Test,60371103,NO2,42602,1,599,1 Hr,8/1/2019,8:00,8/1/2019,3:00,-05:00,4,PPM3,0
""",
    "airnow-api.json": """[{"Latitude":36.07,"Longitude":-115.24,"UTC":"2026-06-09T19:00","Parameter":"PM2.5","Unit":"UG/M3","Value":3.3,"RawConcentration":3.2,"AQI":18,"Category":1,"SiteName":"Example Site","AgencyName":"Example Agency","FullAQSCode":"320030044","IntlAQSCode":"840320030044"},
{"Latitude":36.07,"Longitude":-115.24,"UTC":"2026-06-09T19:00","Parameter":"OZONE","Unit":"PPB","Value":41.0,"RawConcentration":44.0,"AQI":38,"Category":1,"SiteName":"Example Site","AgencyName":"Example Agency","FullAQSCode":"320030044","IntlAQSCode":"840320030044"},
{"Latitude":34.0669,"Longitude":-118.2268,"UTC":"2026-06-09T20:00","Parameter":"PM10","Unit":"UG/M3","Value":-999,"AQI":19,"Category":1,"SiteName":"Second Site","AgencyName":"Example Agency","IntlAQSCode":"840060371103"}]
""",
    "aqs-sampledata.json": """{"Header":[{"status":"Success","rows":2}],"Data":[
{"state_code":"37","county_code":"063","site_number":"0099","parameter_code":"44201","poc":1,"latitude":35.889402,"longitude":-78.8747,"datum":"WGS84","parameter":"Ozone","date_local":"2019-08-01","time_local":"00:00","date_gmt":"2019-08-01","time_gmt":"05:00","sample_measurement":0.023,"units_of_measure":"Parts per million","sample_duration":"1 HOUR","qualifier":null,"method_type":"FEM"},
{"state_code":"37","county_code":"063","site_number":"0099","parameter_code":"88101","poc":2,"latitude":35.889402,"longitude":-78.8747,"datum":"WGS84","parameter":"PM2.5 - Local Conditions","date_local":"2019-08-01","time_local":"00:00","date_gmt":"2019-08-01","time_gmt":"00:00","sample_measurement":8.7,"units_of_measure":"Micrograms/cubic meter (LC)","sample_duration":"24 HOUR","qualifier":"BF - Precision/Zero/Span.","method_type":"FEM"}]}
""",
    "aqs-sampledata.csv": """state_code,county_code,site_number,parameter_code,poc,latitude,longitude,datum,parameter,date_local,time_local,date_gmt,time_gmt,sample_measurement,units_of_measure,sample_duration,qualifier
37,063,0099,44201,1,35.889402,-78.8747,WGS84,Ozone,2019-08-01,00:00,2019-08-01,05:00,0.023,Parts per million,1 HOUR,
37,063,0099,88502,3,35.889402,-78.8747,WGS84,Acceptable PM2.5 AQI & Speciation Mass,2019-08-01,00:00,2019-08-01,05:00,10.4,Micrograms/cubic meter (LC),1 HOUR,
37,063,0099,44201,1,35.889402,-78.8747,WGS84,Ozone,2019-08-01,01:00,2019-08-01,06:00,,Parts per million,1 HOUR,BF - Precision/Zero/Span.
""",
    "airdata-hourly.csv": """"State Code","County Code","Site Num","Parameter Code","POC","Latitude","Longitude","Datum","Parameter Name","Date Local","Time Local","Date GMT","Time GMT","Sample Measurement","Units of Measure","MDL","Uncertainty","Qualifier","Method Type","Method Code","Method Name","State Name","County Name","Date of Last Change"
"37","063","0099","44201",1,35.889402,-78.8747,"WGS84","Ozone","2019-08-01","00:00","2019-08-01","05:00",0.023,"Parts per million",0.005,"","","FEM","087","INSTRUMENTAL - ULTRA VIOLET ABSORPTION","North Carolina","Durham","2019-11-05"
""",
    "openaq-hours.json": """{"meta":{"name":"openaq-api","page":1,"limit":100,"found":">1000"},"results":[
{"value":0.059,"parameter":{"id":0,"name":"o3","units":"ppm"},"period":{"label":"1hour","interval":"01:00:00","datetimeFrom":{"utc":"2024-08-26T20:00:00Z"},"datetimeTo":{"utc":"2024-08-26T21:00:00Z"}}},
{"value":null,"parameter":{"id":0,"name":"pm25","units":"µg/m³"},"period":{"label":"1day","interval":"24:00:00","datetimeFrom":{"utc":"2024-08-25T06:00:00Z"},"datetimeTo":{"utc":"2024-08-26T06:00:00+00:00"}}}]}
""",
    "open-meteo.json": """{"latitude":52.52,"longitude":13.419998,"utc_offset_seconds":3600,"timezone":"Europe/Berlin",
"daily_units":{"time":"iso8601","temperature_2m_max":"°C","temperature_2m_min":"°C","temperature_2m_mean":"°C"},
"daily":{"time":["1950-07-04","1950-07-05"],"temperature_2m_max":[24.1,null],"temperature_2m_min":[12.3,13.0],"temperature_2m_mean":[18.0,null]}}
""",
    "daily-temperature-bad-rows.csv": """date,max,min
2020-01-01,NA,
01/03/2020,50,40
2020-01-04,warm,40
2020-02-30,50,40
""",
    "glucose-bad-rows.csv": """datetime,isig,glucose
2010-03-24 09:51:00,22.59,258
2010-03-24 10:01:00,22.23,high
24/03/2010 10:06,21.56,254
2010-03-24T10:11:00Z,21.0,250
""",
}
for name, text in samples.items():
    write(name, text.encode())
